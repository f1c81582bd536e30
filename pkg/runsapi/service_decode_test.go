package runsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
)

func TestDecodeStartRunBody_Cases_MatchSpec(t *testing.T) {
	long := strings.Repeat("a", 256)
	tests := []struct {
		name      string
		body      string
		wantErr   error // errBodyNotObject, ErrInvalidInstanceID, or errTestValidation for *bodyValidationError
		wantID    string
		wantInput string
		wantMeta  string
		wantLocs  []string
	}{
		{name: "empty object", body: `{}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "whitespace around", body: " \n{ \"input\" : {\"a\": 1} }\t", wantInput: `{"a":1}`, wantMeta: `{}`},
		{name: "input and metadata kept in order", body: `{"input":{"z":1,"a":[1, 2]},"metadata":{"k":"v"}}`, wantInput: `{"z":1,"a":[1,2]}`, wantMeta: `{"k":"v"}`},
		{name: "unknown keys ignored", body: `{"other": [1], "input": {}}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "last duplicate wins", body: `{"instance_id": "a", "instance_id": "b"}`, wantID: "b", wantInput: `{}`, wantMeta: `{}`},
		{name: "pyFalsy input null", body: `{"input": null}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "pyFalsy input false", body: `{"input": false, "metadata": 0}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "pyFalsy input zero float", body: `{"input": 0.0, "metadata": -0e3}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "pyFalsy input empty string", body: `{"input": "", "metadata": []}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "pyFalsy metadata empty object", body: `{"metadata": { }}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "instance id kept", body: `{"instance_id": "run-1"}`, wantID: "run-1", wantInput: `{}`, wantMeta: `{}`},
		{name: "instance id 256 chars", body: `{"instance_id": "` + long + `"}`, wantID: long, wantInput: `{}`, wantMeta: `{}`},
		{name: "instance id with space and symbols", body: `{"instance_id": "a b:c@d$~"}`, wantID: "a b:c@d$~", wantInput: `{}`, wantMeta: `{}`},
		{name: "instance id pyFalsy zero means new", body: `{"instance_id": 0}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "instance id empty means new", body: `{"instance_id": ""}`, wantInput: `{}`, wantMeta: `{}`},
		{name: "instance id null means new", body: `{"instance_id": null}`, wantInput: `{}`, wantMeta: `{}`},

		{name: "empty body", body: ``, wantErr: errBodyNotObject},
		{name: "blank body", body: "  \n", wantErr: errBodyNotObject},
		{name: "not json", body: `{input: 1}`, wantErr: errBodyNotObject},
		{name: "array", body: `[]`, wantErr: errBodyNotObject},
		{name: "string", body: `"x"`, wantErr: errBodyNotObject},
		{name: "null", body: `null`, wantErr: errBodyNotObject},
		{name: "two values", body: `{} {}`, wantErr: errBodyNotObject},
		{name: "bom", body: "\ufeff{}", wantErr: errBodyNotObject},
		{name: "invalid utf8", body: "{\"input\": {\"a\": \"\xff\"}}", wantErr: errBodyNotObject},
		{name: "NaN", body: `{"input": NaN}`, wantErr: errBodyNotObject},

		{name: "input list", body: `{"input": [1]}`, wantErr: errTestValidation, wantLocs: []string{"initial_state"}},
		{name: "input string", body: `{"input": "x"}`, wantErr: errTestValidation, wantLocs: []string{"initial_state"}},
		{name: "input true", body: `{"input": true}`, wantErr: errTestValidation, wantLocs: []string{"initial_state"}},
		{name: "metadata number", body: `{"metadata": 3}`, wantErr: errTestValidation, wantLocs: []string{"metadata"}},
		{name: "both bad, initial_state first", body: `{"metadata": 1, "input": 2}`, wantErr: errTestValidation, wantLocs: []string{"initial_state", "metadata"}},
		{name: "bad input wins over bad id", body: `{"instance_id": "a/b", "input": 2}`, wantErr: errTestValidation, wantLocs: []string{"initial_state"}},

		{name: "instance id slash", body: `{"instance_id": "a/b"}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id backslash", body: `{"instance_id": "a\\b"}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id hash", body: `{"instance_id": "a#b"}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id question", body: `{"instance_id": "a?b"}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id control", body: `{"instance_id": "a\tb"}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id non-ascii", body: `{"instance_id": "caf\u00e9"}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id 257 chars", body: `{"instance_id": "` + long + `a"}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id number", body: `{"instance_id": 5}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id true", body: `{"instance_id": true}`, wantErr: engine.ErrInvalidInstanceID},
		{name: "instance id object", body: `{"instance_id": {"a": 1}}`, wantErr: engine.ErrInvalidInstanceID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeStartRunBody([]byte(tt.body), DefaultMaxInputDepth)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if got.InstanceID != tt.wantID || string(got.Input) != tt.wantInput || string(got.Metadata) != tt.wantMeta {
					t.Fatalf("decode = {%q %s %s}, want {%q %s %s}", got.InstanceID, got.Input, got.Metadata, tt.wantID, tt.wantInput, tt.wantMeta)
				}
				return
			}
			if tt.wantErr == errTestValidation {
				var v *bodyValidationError
				if !errors.As(err, &v) {
					t.Fatalf("err = %v, want *bodyValidationError", err)
				}
				var locs []string
				for _, d := range v.details {
					locs = append(locs, d.Loc[0])
					if d.Type != "dict_type" || d.Msg != "Input should be a valid dictionary" || !json.Valid(d.Input) {
						t.Fatalf("detail = %+v", d)
					}
				}
				if strings.Join(locs, ",") != strings.Join(tt.wantLocs, ",") {
					t.Fatalf("locs = %v, want %v", locs, tt.wantLocs)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

var errTestValidation = errors.New("test: want *bodyValidationError")

func TestDecodeCancelReason_Cases_DefaultOrKeptOrRejected(t *testing.T) {
	tests := []struct {
		body    string
		want    string
		wantErr bool
	}{
		{"", DefaultCancelReason, false},
		{"not json", DefaultCancelReason, false},
		{`[1]`, DefaultCancelReason, false},
		{`"why"`, DefaultCancelReason, false},
		{`{}`, DefaultCancelReason, false},
		{`{"other": 1}`, DefaultCancelReason, false},
		{`{"reason": "stop"}`, "stop", false},
		{`{"reason": ""}`, "", false},
		{`{"reason": "caf\u00e9"}`, "café", false},
		{`{"reason": null}`, "", true},
		{`{"reason": 1}`, "", true},
		{`{"reason": ["x"]}`, "", true},
		{`{"reason": false}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			got, err := decodeCancelReason([]byte(tt.body))
			if tt.wantErr {
				if !errors.Is(err, errReasonNotString) {
					t.Fatalf("err = %v, want errReasonNotString", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("decode = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDecodeEventPayload_Bodies_NullWhenEmptyErrorWhenNotJSON(t *testing.T) {
	tests := []struct{ body, want string }{
		{"", "null"},
		{"   ", "null"},
		{"{bad", ""},
		{"\xff", ""},
		{`{"approved": true, "reviewer": "a"}`, `{"approved":true,"reviewer":"a"}`},
		{`[1, 2]`, `[1,2]`},
		{`"text"`, `"text"`},
		{`false`, `false`},
		{`null`, `null`},
	}
	for _, tt := range tests {
		got, err := decodeEventPayload([]byte(tt.body), DefaultMaxInputDepth)
		if tt.want == "" {
			if !errors.Is(err, errEventBodyNotJSON) {
				t.Errorf("decodeEventPayload(%q) = %s, %v; want errEventBodyNotJSON", tt.body, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("decodeEventPayload(%q) = %s, %v; want %s", tt.body, got, err, tt.want)
		}
	}
}

func TestParseRunQuery_Values_FilterOrReject(t *testing.T) {
	after := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		query     string
		want      engine.RunQuery
		wantParam string
	}{
		{"", engine.RunQuery{Limit: apiDefaultPageSize}, ""},
		// The token is kept as sent: listRuns opens it (token_test.go).
		{"graph_name=g&status=Running&limit=5&continuation_token=tok&ignored=1", engine.RunQuery{GraphName: "g", Status: engine.StatusRunning, Limit: 5, ContinuationToken: "tok"}, ""},
		{"created_after=2025-01-02T03:04:05Z", engine.RunQuery{CreatedAfter: after, Limit: apiDefaultPageSize}, ""},
		{"limit=1000", engine.RunQuery{Limit: 1000}, ""},
		{"status=running", engine.RunQuery{}, "status"},
		{"runtime_status=Failed", engine.RunQuery{Status: engine.StatusFailed, Limit: 100}, ""},
		{"runtime_status=Failed&status=Failed", engine.RunQuery{Status: engine.StatusFailed, Limit: 100}, ""},
		{"runtime_status=Failed&status=Running", engine.RunQuery{}, "runtime_status"},
		{"runtime_status=failed", engine.RunQuery{}, "runtime_status"},
		{"status=Suspended", engine.RunQuery{}, "status"},
		{"created_after=yesterday", engine.RunQuery{}, "created_after"},
		{"created_before=2025-13-01T00:00:00Z", engine.RunQuery{}, "created_before"},
		{"created_after=2025-01-02T03:04:05Z&created_before=2025-01-01T00:00:00Z", engine.RunQuery{}, "created_after"},
		{"created_before=2300-01-01T00:00:00Z", engine.RunQuery{}, "created_before"},
		{"created_after=2300-01-01T00:00:00Z", engine.RunQuery{}, "created_after"},
		{"created_before=1600-01-01T00:00:00Z", engine.RunQuery{}, "created_before"},
		{"created_after=1677-09-21T00:12:43Z", engine.RunQuery{}, "created_after"},
		{"created_after=1970-01-01T00:00:00Z", engine.RunQuery{}, "created_after"},
		{"created_before=2262-04-11T23:47:16.854775808Z", engine.RunQuery{}, "created_before"},
		{"created_after=9999-12-31T23:59:59Z", engine.RunQuery{}, "created_after"},
		{"limit=0", engine.RunQuery{}, "limit"},
		{"limit=1001", engine.RunQuery{}, "limit"},
		{"limit=ten", engine.RunQuery{}, "limit"},
		{"graph_hash=af183f226f37e6fc", engine.RunQuery{GraphHash: "af183f226f37e6fc", Limit: apiDefaultPageSize}, ""},
		{"graph_hash=AF183F226F37E6FC", engine.RunQuery{}, "graph_hash"},
		{"graph_hash=af183f226f37e6f", engine.RunQuery{}, "graph_hash"},
		{"graph_name=a%2Fb", engine.RunQuery{}, "graph_name"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			got, err := parseRunQuery(v)
			if tt.wantParam != "" {
				var q *apiQueryError
				if !errors.As(err, &q) || q.param != tt.wantParam {
					t.Fatalf("err = %v, want apiQueryError for %s", err, tt.wantParam)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !got.CreatedAfter.Equal(tt.want.CreatedAfter) {
				t.Fatalf("CreatedAfter = %v, want %v", got.CreatedAfter, tt.want.CreatedAfter)
			}
			got.CreatedAfter, tt.want.CreatedAfter = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("query = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPublicError_Errors_MapToSpecStatus(t *testing.T) {
	tests := []struct {
		err        error
		wantStatus int
		wantBody   string
	}{
		{&graphNotFoundError{name: "nope"}, 404, `{"error": "unknown graph 'nope'"}`},
		{&graphNotFoundError{name: "g", hash: "0123456789abcdef"}, 404, `{"error": "unknown version '0123456789abcdef' of graph 'g'"}`},
		{engine.ErrRunNotFound, 404, `{"error": "instance not found"}`},
		{errBodyNotObject, 400, `{"error": "request body must be valid JSON object"}`},
		{engine.ErrInvalidInstanceID, 400, `{"error": "invalid instance_id"}`},
		{fmt.Errorf("raise event: %w", engine.ErrInvalidEventName), 400, `{"error": "invalid event_name: want 1 to 256 characters without control characters"}`},
		{errReasonNotString, 400, `{"error": "reason must be a string"}`},
		{&apiQueryError{"limit", "want x"}, 400, `{"error": "invalid query parameter 'limit': want x"}`},
		{fmt.Errorf("list runs: %w: bad continuation token", engine.ErrInvalidQuery), 400, `{"error": "invalid query parameter 'continuation_token': want the token of a previous page, or none to start over"}`},
		{errBodyTooLarge, 413, `{"error": "request body too large"}`},
		{fmt.Errorf("raise event \"e\" run=r: head keeps changing: %w", engine.ErrConflict), 503, `{"error": "instance is busy, retry later"}`},
		{&engine.RunExistsError{InstanceID: "r", Status: engine.StatusRunning}, 409, `{"error": "instance already exists", "instance_id": "r", "runtime_status": "Running"}`},
		{&engine.RunFinishedError{InstanceID: "r", Status: engine.StatusCompleted}, 409, `{"error": "instance is not running", "instance_id": "r", "runtime_status": "Completed"}`},
		{&engine.RunNotFinishedError{InstanceID: "r", Status: engine.StatusPending}, 409, `{"error": "instance is still active", "instance_id": "r", "runtime_status": "Pending"}`},
		{errors.New("table storage exploded: secret=xyz"), 500, `{"error": "internal error"}`},
	}
	for _, tt := range tests {
		status, data := apierror.Runs.Reply(publicError(tt.err))
		var want any
		_ = json.Unmarshal([]byte(tt.wantBody), &want)
		wantData, _ := json.Marshal(want)
		if status != tt.wantStatus || !apiJSONEqual(data, wantData) {
			t.Errorf("Reply(publicError(%v)) = %d %s, want %d %s", tt.err, status, data, tt.wantStatus, tt.wantBody)
		}
	}
}

func apiJSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func FuzzDecodeStartRunBody(f *testing.F) {
	for _, s := range []string{`{}`, `{"input": {"a": 1}, "metadata": {"b": [1]}, "instance_id": "x"}`,
		`{"input": ` + strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40) + `}`,
		`{"input": [1]}`, `{"instance_id": "a/b"}`, `[]`, ``, `{"input": 0, "instance_id": 0}`, "\xff",
		`{"search_keys": {"ticket": "T-42", "n": 7}}`, `{"search_keys": {"a b": true}}`, `{"search_keys": [1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeStartRunBody(body, DefaultMaxInputDepth)
		var v *bodyValidationError
		switch {
		case err == nil:
			for _, raw := range []json.RawMessage{got.Input, got.Metadata} {
				var m map[string]json.RawMessage
				if json.Unmarshal(raw, &m) != nil {
					t.Fatalf("decoded %q: %s is not an object", body, raw)
				}
			}
			if got.InstanceID != "" && !engine.ValidInstanceID(got.InstanceID) {
				t.Fatalf("decoded %q: invalid id %q accepted", body, got.InstanceID)
			}
			if err := engine.CheckSearchKeys(got.SearchKeys); err != nil {
				t.Fatalf("decoded %q: search keys %v accepted: %v", body, got.SearchKeys, err)
			}
		case errors.Is(err, errBodyNotObject):
			var m map[string]any
			if json.Valid(body) && json.Unmarshal(body, &m) == nil && m != nil && strings.HasPrefix(strings.TrimSpace(string(body)), "{") && apiIsJSON(body) {
				t.Fatalf("object body %q rejected as not an object", body)
			}
		case errors.As(err, &v):
			if len(v.details) == 0 || len(v.details) > 2 {
				t.Fatalf("body %q: %d details", body, len(v.details))
			}
		case errors.Is(err, engine.ErrInvalidInstanceID), errors.Is(err, engine.ErrInvalidSearchKey):
		case errors.Is(err, apierror.ErrBadRequest) && strings.Contains(err.Error(), "search_keys"),
			errors.Is(err, apierror.ErrBadRequest) && strings.Contains(err.Error(), "want a string or a number"):
		case errors.Is(err, apierror.ErrBadRequest) && strings.Contains(err.Error(), "exceeds maximum nesting depth of 32"):
			if jsonlimit.Check(body, DefaultMaxInputDepth+1, 0) == nil {
				t.Fatalf("body %q refused as too deep", body)
			}
		default:
			t.Fatalf("body %q: unexpected error %v", body, err)
		}
	})
}
