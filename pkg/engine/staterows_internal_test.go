package engine

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// TestStateRows_Update: what a step changed is recorded field by field — a list field with a
// reducer as the delta against its common prefix, any other field set or removed — and an
// update that would not fold back to the state byte for byte is not written (ok false: the row
// carries the state whole).
func TestStateRows_Update(t *testing.T) {
	t.Parallel()
	r := stateRowsOf(durable.GraphManifest{Reducers: map[string]string{"m": "append", "tags": "merge_keys"}})
	for _, tc := range []struct {
		name, prev, next, want string // want "" : no update
	}{
		{"an append keeps the list before", `{"m":[1,2],"n":0}`, `{"m":[1,2,{"a":3}],"n":0}`, `{"m":{"keep":2,"add":[{"a":3}]}}`},
		{"a change of the last element keeps the rest", `{"m":[1,2,3]}`, `{"m":[1,2,4]}`, `{"m":{"keep":2,"add":[4]}}`},
		{"a rewrite keeps nothing", `{"m":[1,2]}`, `{"m":[9]}`, `{"m":{"keep":0,"add":[9]}}`},
		{"an emptied list", `{"m":[1]}`, `{"m":[]}`, `{"m":{"keep":0,"add":[]}}`},
		{"a list that was null is set", `{"m":null}`, `{"m":[1]}`, `{"m":{"set":[1]}}`},
		{"a map with a reducer is set", `{"tags":{"a":1}}`, `{"tags":{"a":1,"b":2}}`, `{"tags":{"set":{"a":1,"b":2}}}`},
		{"a list without a reducer is set", `{"x":[1]}`, `{"x":[1,2]}`, `{"x":{"set":[1,2]}}`},
		{"unchanged fields are absent", `{"a":1,"b":"s","c":[1]}`, `{"a":2,"b":"s","c":[1]}`, `{"a":{"set":2}}`},
		{"nothing changed", `{"a":1}`, `{"a":1}`, `{}`},
		{"a removed field", `{"a":1,"b":2}`, `{"a":1}`, `{"b":{"removed":true}}`},
		{"a new field, last", `{"a":1}`, `{"a":1,"c":3}`, `{"c":{"set":3}}`},
		{"fields reordered: the state whole", `{"a":1,"b":2}`, `{"b":2,"a":1}`, ""},
		{"a new field before the others: the state whole", `{"a":1}`, `{"c":3,"a":1}`, ""},
		{"whitespace the fold does not write: the state whole", `{"a":1}`, `{"a": 2}`, ""},
		{"whitespace in a list: the state whole", `{"m":[1]}`, `{"m":[1, 2]}`, ""},
		{"no object: the state whole", `{"a":1}`, `[1]`, ""},
		{"prev unknown: the state whole", "", `{"a":1}`, ""},
		{"strings with brackets and escapes", `{"m":["a]\"}"]}`, `{"m":["a]\"}","{[\\"]}`, `{"m":{"keep":1,"add":["{[\\"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prev []byte
			if tc.prev != "" {
				prev = []byte(tc.prev)
			}
			got, ok := r.update(prev, []byte(tc.next))
			if tc.want == "" {
				if ok {
					t.Fatalf("update %s, want none", got)
				}
				return
			}
			if !ok || got != tc.want {
				t.Fatalf("update %q (%v), want %q", got, ok, tc.want)
			}
			folded, err := applyUpdate(prev, []byte(got))
			if err != nil || string(folded) != tc.next {
				t.Fatalf("fold %s (%v), want %s", folded, err, tc.next)
			}
		})
	}
	if u, ok := (*stateRows)(nil).update([]byte(`{"a":1}`), []byte(`{"a":2}`)); ok {
		t.Fatalf("a graph without reducers recorded the update %s", u)
	}
	if stateRowsOf(durable.GraphManifest{}) != nil {
		t.Fatal("a graph without reducers records updates")
	}
}

// TestApplyUpdate_RefusesWhatDoesNotApply: an update that does not fit the state before it is
// ErrBadUpdate, never a guess.
func TestApplyUpdate_RefusesWhatDoesNotApply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, prev, update string }{
		{"keep past the list's end", `{"m":[1]}`, `{"m":{"keep":2,"add":[]}}`},
		{"keep of no list", `{"m":3}`, `{"m":{"keep":1,"add":[]}}`},
		{"keep of an absent field", `{}`, `{"m":{"keep":1,"add":[]}}`},
		{"a negative keep", `{"m":[1]}`, `{"m":{"keep":-1,"add":[]}}`},
		{"add is no list", `{"m":[1]}`, `{"m":{"keep":1,"add":2}}`},
		{"an unknown operation", `{"a":1}`, `{"a":{"put":2}}`},
		{"an operation that is no object", `{"a":1}`, `{"a":2}`},
		{"no state before", ``, `{"a":{"set":2}}`},
		{"an update that is no object", `{"a":1}`, `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := applyUpdate([]byte(tc.prev), []byte(tc.update)); !errors.Is(err, ErrBadUpdate) {
				t.Fatalf("applyUpdate = %s, %v; want ErrBadUpdate", s, err)
			}
		})
	}
}

// FuzzStateRows_UpdateFoldsBack: whatever two states a step goes between, an update written
// folds back to the second byte for byte, and the fold of any update never panics.
func FuzzStateRows_UpdateFoldsBack(f *testing.F) {
	f.Add(`{"m":[1,2],"n":0}`, `{"m":[1,2,3],"n":1}`)
	f.Add(`{"m":["a]\"}"]}`, `{"m":[],"x":{"y":[1]}}`)
	f.Add(`{"a":1}`, `{"m":{"keep":0,"add":[]}}`)
	r := stateRowsOf(durable.GraphManifest{Reducers: map[string]string{"m": "append"}})
	f.Fuzz(func(t *testing.T, prev, next string) {
		if u, ok := r.update([]byte(prev), []byte(next)); ok {
			s, err := applyUpdate([]byte(prev), []byte(u))
			if err != nil || string(s) != next {
				t.Fatalf("update %s of %s folds to %s (%v), want %s", u, prev, s, err, next)
			}
			if !json.Valid([]byte(u)) && json.Valid([]byte(next)) && json.Valid([]byte(prev)) {
				t.Fatalf("update %s of valid states is no JSON", u)
			}
		}
		_, _ = applyUpdate([]byte(prev), []byte(next)) // next as an update: no panic
	})
}
