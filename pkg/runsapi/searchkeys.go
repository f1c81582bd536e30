package runsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// Search keys over HTTP: a start adds keys with "search_keys": {"<name>": "<value>"} in its
// body (a value may be a string or a number, kept as its JSON text), besides those the graph
// declares; GET /api/runs?key.<name>=<value> lists the runs with that key value, combinable
// with the other filters, read from the key's index partition (engine/searchkeys.go).

// searchKeyParamPrefix begins the name of a listing's search-key parameter.
const searchKeyParamPrefix = "key."

// errSearchKeysNotObject answers a truthy search_keys that is not an object.
var errSearchKeysNotObject = apierror.New(apierror.ErrBadRequest, "invalid search_keys: want an object of key names to strings")

// decodeStartSearchKeys returns the search_keys member of a start body: nil when absent or
// falsy (null, {}, ...); else an object whose values are strings or numbers.
func decodeStartSearchKeys(fields map[string]json.RawMessage) (map[string]string, error) {
	raw, present := fields["search_keys"]
	if !present || pyFalsy(raw) {
		return nil, nil
	}
	if raw = bytes.TrimSpace(raw); raw[0] != '{' {
		return nil, errSearchKeysNotObject
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, errSearchKeysNotObject
	}
	keys := make(map[string]string, len(members))
	for _, name := range slices.Sorted(maps.Keys(members)) {
		v := bytes.TrimSpace(members[name])
		switch c := v[0]; {
		case c == '"':
			var s string
			_ = json.Unmarshal(v, &s) // valid JSON: the body was checked
			keys[name] = s
		case c == '-' || c >= '0' && c <= '9':
			keys[name] = string(v)
		default:
			return nil, apierror.Newf(apierror.ErrBadRequest, "invalid search key '%s': want a string or a number", name)
		}
	}
	if err := engine.CheckSearchKeys(keys); err != nil {
		return nil, err // a *engine.SearchKeyError, a 400 (publicError)
	}
	return keys, nil
}

// searchKeyError is the 400 of ske.
func searchKeyError(ske *engine.SearchKeyError) error {
	if ske.Name == "" {
		return apierror.New(apierror.ErrBadRequest, "invalid search_keys: "+ske.Reason)
	}
	return apierror.Newf(apierror.ErrBadRequest, "invalid search key '%s': %s", ske.Name, ske.Reason)
}

// parseSearchKeyParams returns the search keys a listing filters by: its parameters
// key.<name>=<value>, one value each; an empty value does not filter. Errors: a 400 naming
// the parameter, for a name or value no run can have, a parameter given twice, or more keys
// than a run has.
func parseSearchKeyParams(q url.Values) (map[string]string, error) {
	var keys map[string]string
	for _, param := range slices.Sorted(maps.Keys(q)) {
		name, ok := strings.CutPrefix(param, searchKeyParamPrefix)
		if !ok {
			continue
		}
		vs := q[param]
		if len(vs) > 1 {
			return nil, &apiQueryError{param, "want one value"}
		}
		if vs[0] == "" {
			continue
		}
		if keys == nil {
			keys = map[string]string{}
		}
		keys[name] = vs[0]
		var ske *engine.SearchKeyError
		if err := engine.CheckSearchKeys(map[string]string{name: vs[0]}); errors.As(err, &ske) {
			return nil, &apiQueryError{param, ske.Reason}
		}
	}
	if len(keys) > engine.MaxSearchKeys {
		return nil, &apiQueryError{searchKeyParamPrefix + "<name>", fmt.Sprintf("want at most %d search keys", engine.MaxSearchKeys)}
	}
	return keys, nil
}
