package memory_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// GetRow hands over what Get returns: the same properties, ETag and Timestamp, and the
// same errors.
func TestStore_GetRow_SameAsGet(t *testing.T) {
	t.Parallel()
	s := memory.NewStore()
	props := map[string]any{
		"S": "a string", "B": []byte{1, 2}, "T": true, "F": false, "I": int32(-7), "L": int64(1 << 40),
		"D": 2.5, "At": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), "Empty": "",
	}
	for range 20 { // a value written often enough goes to the dictionary
		props["Frequent"] = "frequent value"
		if _, err := s.Submit(t.Context(), []engine.Op{{Kind: engine.OpReplace, IfMatch: engine.ETagAny,
			Entity: engine.Entity{PartitionKey: "p", RowKey: "r", Properties: props}}}); errors.Is(err, engine.ErrNotFound) {
			_, err = s.Submit(t.Context(), []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "p", RowKey: "r", Properties: props}}})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	want, err := s.Get(t.Context(), "p", "r")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	etag, ts, err := s.GetRow(t.Context(), "p", "r", func(name string, v any) { got[name] = v })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want.Properties) || !reflect.DeepEqual(got, props) {
		t.Errorf("GetRow properties %v, Get %v, written %v", got, want.Properties, props)
	}
	if etag != want.ETag || !ts.Equal(want.Timestamp) || ts.Location() != time.UTC {
		t.Errorf("GetRow etag %q ts %v, Get %q %v", etag, ts, want.ETag, want.Timestamp)
	}
	_, gerr := s.Get(t.Context(), "p", "missing")
	_, _, rerr := s.GetRow(t.Context(), "p", "missing", func(string, any) { t.Error("visit of a missing row") })
	if !errors.Is(rerr, engine.ErrNotFound) || rerr.Error() != gerr.Error() {
		t.Errorf("GetRow of a missing row: %v, Get: %v", rerr, gerr)
	}
	_, _, rerr = s.GetRow(t.Context(), "p", "bad/key", func(string, any) {})
	if !errors.Is(rerr, engine.ErrInvalidEntity) {
		t.Errorf("GetRow of a bad key: %v", rerr)
	}
}
