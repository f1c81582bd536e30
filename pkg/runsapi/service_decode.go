package runsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
)

// DefaultCancelReason is the reason of a cancel whose body names none.
const DefaultCancelReason = "cancel requested by client"

// Paging limits of the list and history endpoints.
const (
	apiDefaultPageSize = 100
	apiMaxPageSize     = 1000
)

// startRunBody is a decoded start request body.
type startRunBody struct {
	// InstanceID is the requested run id; empty means "generate one".
	InstanceID string
	// Input and Metadata are JSON objects ({} when absent or pyFalsy).
	Input, Metadata json.RawMessage
	// SearchKeys are the start's search keys (searchkeys.go); nil for none.
	SearchKeys map[string]string
}

var apiEmptyObject = json.RawMessage(`{}`)

// decodeStartRunBody applies checks 2–4 of the start endpoint, in order: the body must be a
// JSON object (errBodyNotObject); truthy input and metadata must be objects
// (*bodyValidationError listing initial_state then metadata); input, then metadata, must nest
// no deeper than maxDepth (depthError); instance_id must be absent, pyFalsy, or a valid id
// (ErrInvalidInstanceID); search_keys must be absent, falsy, or an object of strings and
// numbers within the engine's bounds (decodeStartSearchKeys). Unknown keys are ignored; a
// repeated key keeps its last value.
func decodeStartRunBody(body []byte, maxDepth int) (startRunBody, error) {
	fields, ok := apiDecodeObject(body)
	if !ok {
		return startRunBody{}, errBodyNotObject
	}
	var out startRunBody
	var details []apiFieldError
	for _, f := range []struct {
		key, loc string
		dst      *json.RawMessage
	}{{"input", "initial_state", &out.Input}, {"metadata", "metadata", &out.Metadata}} {
		raw, present := fields[f.key]
		switch {
		case !present || pyFalsy(raw):
			*f.dst = apiEmptyObject
		case raw[0] == '{':
			*f.dst = apiCompact(raw)
		default:
			details = append(details, apiFieldError{Type: "dict_type", Loc: []string{f.loc},
				Msg: "Input should be a valid dictionary", Input: apiCompact(raw)})
		}
	}
	if len(details) > 0 {
		return startRunBody{}, &bodyValidationError{details: details}
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"input", out.Input}, {"metadata", out.Metadata}} {
		if err := checkDepth(f.name, f.raw, maxDepth); err != nil {
			return startRunBody{}, err
		}
	}
	if raw, present := fields["instance_id"]; present && !pyFalsy(raw) {
		var id string
		if err := json.Unmarshal(raw, &id); err != nil || !engine.ValidInstanceID(id) {
			return startRunBody{}, engine.ErrInvalidInstanceID
		}
		out.InstanceID = id
	}
	keys, err := decodeStartSearchKeys(fields)
	if err != nil {
		return startRunBody{}, err
	}
	out.SearchKeys = keys
	return out, nil
}

// apiDecodeObject parses body as one strict JSON object (valid UTF-8, RFC 8259, no BOM) into
// its members, the last of repeated keys winning.
func apiDecodeObject(body []byte) (map[string]json.RawMessage, bool) {
	if !apiIsJSON(body) {
		return nil, false
	}
	var fields map[string]json.RawMessage
	if bytes.TrimLeft(body, " \t\r\n")[0] != '{' || json.Unmarshal(body, &fields) != nil {
		return nil, false
	}
	return fields, true
}

// apiIsJSON reports whether body is one non-empty, valid UTF-8, RFC 8259 JSON value.
func apiIsJSON(body []byte) bool {
	return len(bytes.TrimSpace(body)) > 0 && utf8.Valid(body) && json.Valid(body)
}

// pyFalsy reports Python truthiness false for a JSON value: null, false, 0, "", [] and {}.
func pyFalsy(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return true
	}
	switch raw[0] {
	case 'n', 'f':
		return true
	case 't':
		return false
	case '"':
		return len(raw) == 2
	case '[':
		var a []json.RawMessage
		return json.Unmarshal(raw, &a) == nil && len(a) == 0
	case '{':
		var m map[string]json.RawMessage
		return json.Unmarshal(raw, &m) == nil && len(m) == 0
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return err == nil && f == 0
}

func apiCompact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// decodeEventPayload returns the event body as a JSON value: an empty body is null, a
// non-empty one that is not JSON is errEventBodyNotJSON, one nested deeper than maxDepth a
// depthError.
func decodeEventPayload(body []byte, maxDepth int) (json.RawMessage, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return json.RawMessage("null"), nil
	}
	if !apiIsJSON(body) {
		return nil, errEventBodyNotJSON
	}
	if err := checkDepth("request body", body, maxDepth); err != nil {
		return nil, err
	}
	return apiCompact(body), nil
}

// checkDepth refuses a JSON value (checked JSON) nested deeper than maxDepth, a top-level
// container being depth 1, as the hosting and platform routes count it: 400 "<what> exceeds
// maximum nesting depth of <maxDepth>".
func checkDepth(what string, raw json.RawMessage, maxDepth int) error {
	if err := jsonlimit.Check(raw, maxDepth, 0); err != nil {
		return apierror.Newf(apierror.ErrBadRequest, "%s exceeds maximum nesting depth of %d", what, maxDepth)
	}
	return nil
}

// decodeCancelReason returns the cancel reason: DefaultCancelReason when the body is empty,
// invalid, not an object, or has no reason; errReasonNotString when reason is present and not
// a string (null included). An explicit "" is kept.
func decodeCancelReason(body []byte) (string, error) {
	fields, ok := apiDecodeObject(body)
	if !ok {
		return DefaultCancelReason, nil
	}
	raw, present := fields["reason"]
	if !present {
		return DefaultCancelReason, nil
	}
	var reason string
	if bytes.TrimSpace(raw)[0] != '"' || json.Unmarshal(raw, &reason) != nil {
		return "", errReasonNotString
	}
	return reason, nil
}

// apiReadBody reads the request body up to max bytes: errBodyTooLarge above it, a
// *funchost.BodyError (400 or 408 with a message fit for the caller) for a malformed chunked
// body or a client too slow to send it.
func apiReadBody(_ http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, err := funchost.ReadRequestBody(r, max)
	if errors.Is(err, funchost.ErrBodyTooLarge) {
		return nil, errBodyTooLarge
	}
	if err != nil {
		return nil, err
	}
	return body, nil
}

// timeRangeWant is what a time filter outside the run index's range is told.
var timeRangeWant = "want a time from " + engine.MinCreatedFilter.Format(time.RFC3339Nano) + " to " +
	engine.MaxCreatedFilter.Format(time.RFC3339Nano)

// parseRunQuery reads the filters and paging of GET /api/runs. Unknown parameters are
// ignored; an empty value does not filter.
func parseRunQuery(q url.Values) (engine.RunQuery, error) {
	out := engine.RunQuery{GraphName: q.Get("graph_name")}
	if out.GraphName != "" && !engine.ValidGraphName(out.GraphName) {
		return engine.RunQuery{}, &apiQueryError{"graph_name", "want 1 to 256 characters without / \\ # ? or control characters"}
	}
	if out.GraphHash = q.Get("graph_hash"); out.GraphHash != "" && !validGraphHash(out.GraphHash) {
		return engine.RunQuery{}, &apiQueryError{"graph_hash", "want 16 lowercase hexadecimal digits"}
	}
	// runtime_status, the name of the field it filters on, or status (kept): one status.
	name, v := "status", q.Get("status")
	if rs := q.Get("runtime_status"); rs != "" {
		if v != "" && v != rs {
			return engine.RunQuery{}, &apiQueryError{"runtime_status", "want the value of 'status', or only one of the two"}
		}
		name, v = "runtime_status", rs
	}
	if v != "" {
		if out.Status = engine.RunStatus(v); !out.Status.Valid() {
			return engine.RunQuery{}, &apiQueryError{name, "want Pending, Running, Completed, Failed or Terminated"}
		}
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"created_after", &out.CreatedAfter}, {"created_before", &out.CreatedBefore}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return engine.RunQuery{}, &apiQueryError{p.name, "want an RFC 3339 time such as 2025-01-02T15:04:05Z"}
			}
			if t.Before(engine.MinCreatedFilter) || t.After(engine.MaxCreatedFilter) {
				return engine.RunQuery{}, &apiQueryError{p.name, timeRangeWant}
			}
			*p.dst = t
		}
	}
	if !out.CreatedAfter.IsZero() && !out.CreatedBefore.IsZero() && !out.CreatedAfter.Before(out.CreatedBefore) {
		return engine.RunQuery{}, &apiQueryError{"created_after", "must be before created_before"}
	}
	limit, err := parseLimit(q)
	if err != nil {
		return engine.RunQuery{}, err
	}
	out.Limit = limit
	if out.Keys, err = parseSearchKeyParams(q); err != nil {
		return engine.RunQuery{}, err
	}
	out.ContinuationToken = q.Get("continuation_token") // as the client sent it: listRuns opens it (token.go)
	return out, nil
}

// validGraphHash reports whether h has the shape of a graph_hash: 16 lowercase hex digits.
func validGraphHash(h string) bool {
	if len(h) != 16 {
		return false
	}
	for i := range len(h) {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// parseLimit reads the limit parameter: 1–1000, default 100.
func parseLimit(q url.Values) (int, error) {
	v := strings.TrimSpace(q.Get("limit"))
	if v == "" {
		return apiDefaultPageSize, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > apiMaxPageSize {
		return 0, &apiQueryError{"limit", "want an integer from 1 to 1000"}
	}
	return n, nil
}
