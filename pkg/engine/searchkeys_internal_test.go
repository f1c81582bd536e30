package engine

import (
	"encoding/json"
	"maps"
	"testing"
)

// FuzzRunSearchKeys: whatever the input and given keys, runSearchKeys returns keys that
// CheckSearchKeys accepts, or a *SearchKeyError, and the keys survive their SearchKeys
// property.
func FuzzRunSearchKeys(f *testing.F) {
	f.Add(`{"ticket":"T-42","n":7}`, "customer", "acme")
	f.Add(`{"ticket":""}`, "a b", "x")
	f.Add(`{"ticket":-1.5e3}`, "k", "\x01")
	f.Fuzz(func(t *testing.T, input, name, value string) {
		if !json.Valid([]byte(input)) || len(input) == 0 || input[0] != '{' {
			return
		}
		keys, err := runSearchKeys([]string{"ticket", "n"}, json.RawMessage(input), map[string]string{name: value})
		if err != nil {
			if _, ok := err.(*SearchKeyError); !ok {
				t.Fatalf("error %T %v, want a *SearchKeyError", err, err)
			}
			return
		}
		if err := CheckSearchKeys(keys); err != nil {
			t.Fatalf("keys %v: %v", keys, err)
		}
		if back := decodeSearchKeys(searchKeysJSON(keys)); !maps.Equal(back, keys) && len(keys) > 0 {
			t.Fatalf("keys %v read back as %v", keys, back)
		}
	})
}
