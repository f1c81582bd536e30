package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// RunStoreTests runs the engine.Store conformance suite. newStore returns the store under
// test for each subtest; the suite uses fresh partition keys for every subtest, so the stores
// it returns may share storage.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) engine.Store) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s engine.Store)
	}{
		{"Get_Missing_NotFound", storeGetMissing},
		{"Insert_RoundTripsValuesAndETag", storeInsertRoundTrip},
		{"Insert_Existing_ConflictAndAtomic", storeInsertExisting},
		{"Replace_ETag_ConditionsWrite", storeReplaceETag},
		{"Merge_KeepsOtherProperties", storeMerge},
		{"UpdateDelete_Missing_NotFound", storeMissingUpdates},
		{"Delete_RemovesRow", storeDelete},
		{"Batch_Shape_Rejected", storeBatchShape},
		{"Batch_OpCount_LimitAt100", storeBatchOpCount},
		{"Property_StringUTF16_LimitAt32768", storeStringLimit},
		{"Property_Binary_LimitAt65536", storeBinaryLimit},
		{"Entity_Properties_LimitAt252", storePropertyCount},
		{"Entity_Size_LimitAt1MiB", storeEntitySize},
		{"Batch_Size_LimitAt4MiB", storeBatchSize},
		{"Keys_IllegalCharacters_Rejected", storeKeys},
		{"Query_PartitionRange_PagesWithContinuation", storeQueryPaging},
		{"Query_Conditions_FilterAcrossPartitions", storeQueryConditions},
		{"ConcurrentReplace_OneWinner", storeConcurrentReplace},
		{"ConcurrentInsert_OneWinner", storeConcurrentInsert},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newStore(t))
		})
	}
}

// UniqueKey returns a partition key unique to this call, safe to use on shared storage.
func UniqueKey(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func ctxOf(t *testing.T) context.Context { return t.Context() }

func insert(pk, rk string, props map[string]any) engine.Op {
	return engine.Op{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: rk, Properties: props}}
}

func mustSubmit(t *testing.T, s engine.Store, ops ...engine.Op) []string {
	t.Helper()
	etags, err := s.Submit(ctxOf(t), ops)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if len(etags) != len(ops) {
		t.Fatalf("Submit returned %d etags for %d ops", len(etags), len(ops))
	}
	return etags
}

func mustGet(t *testing.T, s engine.Store, pk, rk string) engine.Entity {
	t.Helper()
	e, err := s.Get(ctxOf(t), pk, rk)
	if err != nil {
		t.Fatalf("Get %s/%s: %v", pk, rk, err)
	}
	return e
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

func storeGetMissing(t *testing.T, s engine.Store) {
	_, err := s.Get(ctxOf(t), UniqueKey("missing"), "r")
	wantErr(t, err, engine.ErrNotFound)
}

func storeInsertRoundTrip(t *testing.T, s engine.Store) {
	pk := UniqueKey("rt")
	when := time.Date(2026, 3, 4, 5, 6, 7, 123000000, time.UTC)
	props := map[string]any{
		"S": "héllo 😀", "B": []byte{0, 1, 2}, "T": true, "I32": int32(-7), "I64": int64(1) << 40,
		"F": 2.5, "When": when,
	}
	etags := mustSubmit(t, s, insert(pk, "r1", props))
	props["S"] = "mutated after submit"
	got := mustGet(t, s, pk, "r1")
	if etags[0] != "" && etags[0] != got.ETag {
		t.Errorf("Submit etag %q != Get etag %q", etags[0], got.ETag)
	}
	if got.ETag == "" {
		t.Error("Get returned an empty ETag")
	}
	checks := map[string]func(any) bool{
		"S":    func(v any) bool { return v == "héllo 😀" },
		"B":    func(v any) bool { b, ok := v.([]byte); return ok && string(b) == "\x00\x01\x02" },
		"T":    func(v any) bool { return v == true },
		"I32":  func(v any) bool { return v == int32(-7) },
		"I64":  func(v any) bool { return v == int64(1)<<40 },
		"F":    func(v any) bool { return v == 2.5 },
		"When": func(v any) bool { tm, ok := v.(time.Time); return ok && tm.Equal(when) },
	}
	for name, ok := range checks {
		if !ok(got.Properties[name]) {
			t.Errorf("property %s = %#v", name, got.Properties[name])
		}
	}
	got.Properties["S"] = "mutated after get"
	if again := mustGet(t, s, pk, "r1"); again.Properties["S"] != "héllo 😀" {
		t.Errorf("store shares its map with callers: %v", again.Properties["S"])
	}
}

func storeInsertExisting(t *testing.T, s engine.Store) {
	pk := UniqueKey("dup")
	mustSubmit(t, s, insert(pk, "a", map[string]any{"V": int64(1)}))
	_, err := s.Submit(ctxOf(t), []engine.Op{
		insert(pk, "b", map[string]any{"V": int64(2)}),
		insert(pk, "a", map[string]any{"V": int64(3)}),
	})
	wantErr(t, err, engine.ErrConflict)
	if _, err := s.Get(ctxOf(t), pk, "b"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("failed batch wrote row b: err=%v", err)
	}
	if e := mustGet(t, s, pk, "a"); e.Properties["V"] != int64(1) {
		t.Fatalf("row a = %v, want 1", e.Properties["V"])
	}
}

func storeReplaceETag(t *testing.T, s engine.Store) {
	pk := UniqueKey("etag")
	mustSubmit(t, s, insert(pk, "h", map[string]any{"V": int64(1), "Gone": "x"}))
	old := mustGet(t, s, pk, "h").ETag
	replace := func(etag string, v int64) error {
		_, err := s.Submit(ctxOf(t), []engine.Op{{Kind: engine.OpReplace, IfMatch: etag,
			Entity: engine.Entity{PartitionKey: pk, RowKey: "h", Properties: map[string]any{"V": v}}}})
		return err
	}
	if err := replace(old, 2); err != nil {
		t.Fatalf("replace with current etag: %v", err)
	}
	wantErr(t, replace(old, 3), engine.ErrConflict)
	e := mustGet(t, s, pk, "h")
	if e.ETag == old || e.Properties["V"] != int64(2) {
		t.Fatalf("after replace: etag %q (old %q), V=%v", e.ETag, old, e.Properties["V"])
	}
	if _, ok := e.Properties["Gone"]; ok {
		t.Fatal("replace kept a property it did not send")
	}
	if err := replace(engine.ETagAny, 4); err != nil {
		t.Fatalf("replace with *: %v", err)
	}
}

func storeMerge(t *testing.T, s engine.Store) {
	pk := UniqueKey("merge")
	etags := mustSubmit(t, s, insert(pk, "h", map[string]any{"A": "a", "B": "b"}))
	etag := etags[0]
	if etag == "" {
		etag = mustGet(t, s, pk, "h").ETag
	}
	mustSubmit(t, s, engine.Op{Kind: engine.OpMerge, IfMatch: etag,
		Entity: engine.Entity{PartitionKey: pk, RowKey: "h", Properties: map[string]any{"B": "B2", "C": "c"}}})
	e := mustGet(t, s, pk, "h")
	if e.Properties["A"] != "a" || e.Properties["B"] != "B2" || e.Properties["C"] != "c" {
		t.Fatalf("merge result = %v", e.Properties)
	}
}

func storeMissingUpdates(t *testing.T, s engine.Store) {
	pk := UniqueKey("miss")
	mustSubmit(t, s, insert(pk, "other", map[string]any{"V": int64(1)}))
	for _, kind := range []engine.OpKind{engine.OpReplace, engine.OpMerge, engine.OpDelete} {
		_, err := s.Submit(ctxOf(t), []engine.Op{{Kind: kind, IfMatch: engine.ETagAny,
			Entity: engine.Entity{PartitionKey: pk, RowKey: "nope", Properties: map[string]any{"V": int64(1)}}}})
		if !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%s of a missing row: err = %v, want ErrNotFound", kind, err)
		}
	}
}

func storeDelete(t *testing.T, s engine.Store) {
	pk := UniqueKey("del")
	mustSubmit(t, s, insert(pk, "a", map[string]any{"V": int64(1)}), insert(pk, "b", map[string]any{"V": int64(2)}))
	wrong := engine.Op{Kind: engine.OpDelete, IfMatch: `W/"not-the-etag"`, Entity: engine.Entity{PartitionKey: pk, RowKey: "a"}}
	_, err := s.Submit(ctxOf(t), []engine.Op{wrong})
	wantErr(t, err, engine.ErrConflict)
	mustSubmit(t, s, engine.Op{Kind: engine.OpDelete, IfMatch: engine.ETagAny, Entity: engine.Entity{PartitionKey: pk, RowKey: "a"}})
	_, err = s.Get(ctxOf(t), pk, "a")
	wantErr(t, err, engine.ErrNotFound)
	mustGet(t, s, pk, "b")
}

func storeBatchShape(t *testing.T, s engine.Store) {
	pk := UniqueKey("shape")
	cases := []struct {
		name string
		ops  []engine.Op
	}{
		{"empty", nil},
		{"two partitions", []engine.Op{insert(pk, "a", map[string]any{"V": int64(1)}), insert(pk+"x", "a", map[string]any{"V": int64(1)})}},
		{"row twice", []engine.Op{insert(pk, "a", map[string]any{"V": int64(1)}), insert(pk, "a", map[string]any{"V": int64(2)})}},
		{"replace without If-Match", []engine.Op{{Kind: engine.OpReplace, Entity: engine.Entity{PartitionKey: pk, RowKey: "a", Properties: map[string]any{"V": int64(1)}}}}},
		{"nil value", []engine.Op{insert(pk, "a", map[string]any{"V": nil})}},
		{"bad property name", []engine.Op{insert(pk, "a", map[string]any{"1x": "v"})}},
		{"system property", []engine.Op{insert(pk, "a", map[string]any{"RowKey": "v"})}},
	}
	for _, c := range cases {
		if _, err := s.Submit(ctxOf(t), c.ops); !errors.Is(err, engine.ErrInvalidEntity) {
			t.Errorf("%s: err = %v, want ErrInvalidEntity", c.name, err)
		}
	}
	if _, err := s.Get(ctxOf(t), pk, "a"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a rejected batch wrote a row: %v", err)
	}
}

func storeQueryPaging(t *testing.T, s engine.Store) {
	pk := UniqueKey("page")
	const n = 250
	for b := 0; b < n; b += 100 {
		var ops []engine.Op
		for i := b; i < min(b+100, n); i++ {
			ops = append(ops, insert(pk, fmt.Sprintf("h%05d", i), map[string]any{"I": int64(i)}))
		}
		mustSubmit(t, s, ops...)
	}
	mustSubmit(t, s, insert(pk, "i00001", map[string]any{"I": int64(-1)}), insert(pk, "r", map[string]any{"I": int64(-2)}))
	var got []int64
	q := engine.Query{PartitionKey: pk, RowKeyFrom: "h", RowKeyTo: "i", Limit: 60}
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatal("paging does not end")
		}
		page, err := s.Query(ctxOf(t), q)
		if err != nil {
			t.Fatalf("Query: %v", err)
		}
		if len(page.Entities) > 60 {
			t.Fatalf("page of %d rows, limit 60", len(page.Entities))
		}
		for _, e := range page.Entities {
			got = append(got, e.Properties["I"].(int64))
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	if len(got) != n {
		t.Fatalf("got %d rows, want %d", len(got), n)
	}
	for i, v := range got {
		if v != int64(i) {
			t.Fatalf("row %d = %d: not in row key order", i, v)
		}
	}
	if _, err := s.Query(ctxOf(t), engine.Query{PartitionKey: pk, Limit: 1001}); !errors.Is(err, engine.ErrInvalidQuery) {
		t.Errorf("limit 1001: err = %v, want ErrInvalidQuery", err)
	}
}

func storeQueryConditions(t *testing.T, s engine.Store) {
	tag := UniqueKey("tag")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var pks []string
	for i := range 6 {
		pk := fmt.Sprintf("%s-%d", tag, i)
		pks = append(pks, pk)
		props := map[string]any{"Tag": tag, "N": int64(i), "Even": i%2 == 0, "At": base.Add(time.Duration(i) * time.Hour)}
		if i == 5 {
			delete(props, "N")
		}
		mustSubmit(t, s, insert(pk, "r", props), insert(pk, "x", map[string]any{"Tag": tag, "N": int64(100)}))
	}
	cases := []struct {
		name  string
		where []engine.Cond
		want  []string
	}{
		{"eq bool", []engine.Cond{{Property: "Even", Op: engine.CondEq, Value: true}}, []string{pks[0], pks[2], pks[4]}},
		{"int range", []engine.Cond{{Property: "N", Op: engine.CondGe, Value: int64(2)}, {Property: "N", Op: engine.CondLt, Value: int64(4)}}, []string{pks[2], pks[3]}},
		{"missing property never matches", []engine.Cond{{Property: "N", Op: engine.CondNe, Value: int64(0)}}, []string{pks[1], pks[2], pks[3], pks[4]}},
		{"time", []engine.Cond{{Property: "At", Op: engine.CondGt, Value: base.Add(3 * time.Hour)}}, []string{pks[4], pks[5]}},
	}
	for _, c := range cases {
		where := append([]engine.Cond{{Property: "Tag", Op: engine.CondEq, Value: tag}, {Property: "RowKey", Op: engine.CondEq, Value: "r"}}, c.where...)
		var got []string
		q := engine.Query{Where: where, Limit: 2}
		for range 50 {
			page, err := s.Query(ctxOf(t), q)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for _, e := range page.Entities {
				got = append(got, e.PartitionKey)
			}
			if q.Continuation = page.Continuation; q.Continuation == "" {
				break
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func storeConcurrentReplace(t *testing.T, s engine.Store) {
	pk := UniqueKey("race")
	mustSubmit(t, s, insert(pk, "h", map[string]any{"V": int64(0)}))
	etag := mustGet(t, s, pk, "h").ETag
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Submit(ctxOf(t), []engine.Op{
				{Kind: engine.OpReplace, IfMatch: etag, Entity: engine.Entity{PartitionKey: pk, RowKey: "h", Properties: map[string]any{"V": int64(i + 1)}}},
				insert(pk, fmt.Sprintf("e%02d", i), map[string]any{"V": int64(i)}),
			})
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, engine.ErrConflict):
			t.Errorf("loser error = %v, want ErrConflict", err)
		}
	}
	page, err := s.Query(ctxOf(t), engine.Query{PartitionKey: pk, RowKeyFrom: "e", RowKeyTo: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if wins != 1 || len(page.Entities) != 1 {
		t.Fatalf("%d winners, %d event rows; want exactly 1 of each", wins, len(page.Entities))
	}
}

func storeConcurrentInsert(t *testing.T, s engine.Store) {
	pk := UniqueKey("ins")
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Submit(ctxOf(t), []engine.Op{insert(pk, "k", map[string]any{"V": int64(i)})})
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else if !errors.Is(err, engine.ErrConflict) {
			t.Errorf("loser error = %v, want ErrConflict", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d inserts of one key succeeded, want 1", wins)
	}
}
