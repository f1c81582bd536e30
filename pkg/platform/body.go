package platform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
)

// readBody reads the raw body through funchost.ReadRequestBody, answering its failures as the
// hosting routes do: a body longer than maxBytes (equal passes; a declared Content-Length
// fails before anything is read, a streamed body as soon as it passes the cap) or one whose
// framing is broken (bad chunking, cut short) is a 400, one that did not arrive in time a 408,
// each with the funchost.BodyError's message.
func readBody(r *http.Request, maxBytes int64) ([]byte, error) {
	body, err := funchost.ReadRequestBody(r, maxBytes)
	if err == nil {
		return body, nil
	}
	var be *funchost.BodyError
	if !errors.As(err, &be) {
		be = &funchost.BodyError{Kind: funchost.ErrMalformedBody, Err: err}
	}
	return nil, apierror.Unread(be.Message(), errors.Is(be, funchost.ErrBodyTimeout))
}

// bodyMode says how a route treats its body.
type bodyMode int

const (
	// emptyOK treats an empty or whitespace-only body as {}; non-objects reach the schema
	// check (422).
	emptyOK bodyMode = iota
	// emptyOKObject is emptyOK, and a non-object body is a 400.
	emptyOKObject
	// requiredObject refuses an empty body as invalid JSON and a non-object with 400.
	requiredObject
	// requiredSchema refuses an empty body as invalid JSON; a non-object reaches the schema
	// check (422).
	requiredSchema
)

// object is a parsed JSON object body: its members as raw JSON (duplicate keys: last wins).
type object map[string]json.RawMessage

// parseBody applies the platform's body reading rules after the size check: empty handling,
// strict JSON (400 `Invalid JSON body`), the object rule. A non-object body that reaches the
// schema check is answered 422 by the caller; parseBody returns it as a nil object and ok.
func parseBody(body []byte, mode bodyMode) (object, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 && (mode == emptyOK || mode == emptyOKObject) {
		return object{}, nil
	}
	if !strictJSON(body) {
		return nil, apierror.New(apierror.ErrBadRequest, "Invalid JSON body")
	}
	if trimmed[0] != '{' {
		if mode == emptyOKObject || mode == requiredObject {
			return nil, apierror.New(apierror.ErrBadRequest, "Request body must be a JSON object")
		}
		return nil, apierror.Invalid("body", "Input should be a valid dictionary or object to extract fields from")
	}
	var obj object
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, apierror.New(apierror.ErrBadRequest, "Invalid JSON body")
	}
	return obj, nil
}

// strictJSON reports RFC 8259 JSON in UTF-8: no BOM, valid UTF-8, no NaN/Infinity (which
// encoding/json refuses anyway).
func strictJSON(b []byte) bool {
	if bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}) || !utf8.Valid(b) {
		return false
	}
	return json.Valid(b)
}

// has reports whether key is present and not null.
func (o object) has(key string) bool {
	v, ok := o[key]
	return ok && !isNull(v)
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// kindOf returns the JSON kind of a raw value: 'o' object, 'a' array, 's' string, 'n'
// number, 'b' bool, 'z' null.
func kindOf(v json.RawMessage) byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return 0
	}
	switch v[0] {
	case '{':
		return 'o'
	case '[':
		return 'a'
	case '"':
		return 's'
	case 't', 'f':
		return 'b'
	case 'n':
		return 'z'
	}
	return 'n'
}

// optObject returns member key as an object (nil when absent or null), or a 422.
func (o object) optObject(key string) (json.RawMessage, error) {
	v, ok := o[key]
	if !ok || isNull(v) {
		return nil, nil
	}
	if kindOf(v) != 'o' {
		return nil, apierror.Invalid(key, "Input should be a valid dictionary")
	}
	return v, nil
}

// optString returns member key as a string (ok false when absent or null), or a 422.
func (o object) optString(key string) (string, bool, error) {
	v, ok := o[key]
	if !ok || isNull(v) {
		return "", false, nil
	}
	var s string
	if kindOf(v) != 's' || json.Unmarshal(v, &s) != nil {
		return "", false, apierror.Invalid(key, "Input should be a valid string")
	}
	return s, true, nil
}

// optInt returns member key as an integer ≥ min, def when absent or null, or a 422.
func (o object) optInt(key string, def, min int) (int, error) {
	v, ok := o[key]
	if !ok || isNull(v) {
		return def, nil
	}
	var n int
	if kindOf(v) != 'n' || json.Unmarshal(v, &n) != nil {
		return 0, apierror.Invalid(key, "Input should be a valid integer")
	}
	if n < min {
		return 0, apierror.Invalid(key, fmt.Sprintf("Input should be greater than or equal to %d", min))
	}
	return n, nil
}

// decodeMap decodes an object member into a map (nil for absent or null).
func decodeMap(raw json.RawMessage) map[string]any {
	if raw == nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// checkLimits applies the depth and node rules to raw (jsonlimit.Check), answering the first
// violation as the hosting routes do. Scalars pass.
func checkLimits(raw json.RawMessage, maxDepth, maxNodes int) error {
	switch err := jsonlimit.Check(raw, maxDepth, maxNodes); {
	case err == nil:
		return nil
	case errors.Is(err, jsonlimit.ErrTooDeep):
		return apierror.Newf(apierror.ErrBadRequest, "Input exceeds maximum nesting depth of %d", maxDepth)
	case errors.Is(err, jsonlimit.ErrTooManyNodes):
		return apierror.Newf(apierror.ErrBadRequest, "Input exceeds maximum node count of %d", maxNodes)
	default:
		return apierror.New(apierror.ErrBadRequest, "Invalid JSON body")
	}
}
