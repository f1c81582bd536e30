package engine_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// tickingClock returns a clock that moves one second per reading, so every run has its own
// creation time.
func tickingClock() func() time.Time {
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return func() time.Time { return time.Unix(0, now.Add(int64(time.Second))).UTC() }
}

// pageAll lists every run matching q with page size limit and returns the ids, checking the
// runs come newest first across pages and none twice.
func pageAll(t *testing.T, r *rig, q engine.RunQuery, limit int) []string {
	t.Helper()
	q.Limit = limit
	var ids []string
	var last time.Time
	seen := map[string]bool{}
	for range 1000 {
		page, err := r.e.ListRuns(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range page.Runs {
			if !last.IsZero() && run.CreatedAt.After(last) {
				t.Fatalf("limit %d: %s (created %s) after a newer run", limit, run.InstanceID, run.CreatedAt)
			}
			if seen[run.InstanceID] {
				t.Fatalf("limit %d: %s listed twice", limit, run.InstanceID)
			}
			seen[run.InstanceID], last = true, run.CreatedAt
			ids = append(ids, run.InstanceID)
		}
		if len(page.Runs) > limit {
			t.Fatalf("page of %d runs for limit %d", len(page.Runs), limit)
		}
		if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
			return ids
		}
	}
	t.Fatal("listing did not end")
	return nil
}

// shardsUsed counts the sharded "~runs-<s>" partitions holding rows.
func shardsUsed(t *testing.T, r *rig) int {
	t.Helper()
	n := 0
	for s := range 8 {
		page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: fmt.Sprintf("~runs-%d", s), Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) > 0 {
			n++
		}
	}
	return n
}

// TestEngine_ListRuns_MergesShardsNewestFirst: runs spread over the index shards list in one
// newest-first order whatever the page size, and every filter keeps working across shards.
func TestEngine_ListRuns_MergesShardsNewestFirst(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	var all, pipelines, waiting []string
	for i := range 40 {
		id := fmt.Sprintf("run-%02d", i)
		if i%4 == 0 {
			r.start(t, "support_agent", id, `{"user_message":"refund"}`)
			waiting = append(waiting, id)
		} else {
			r.start(t, "data_pipeline", id, `{"source_url":"u"}`)
			pipelines = append(pipelines, id)
		}
		all = append(all, id)
	}
	r.drive(t)
	r.start(t, "data_pipeline", "pending", `{"source_url":"u"}`)
	all = append(all, "pending")
	if n := shardsUsed(t, r); n < 6 {
		t.Fatalf("runs use %d of 8 shards; the test needs them spread", n)
	}
	newestFirst := func(ids []string) []string {
		out := slices.Clone(ids)
		slices.Reverse(out)
		return out
	}
	hash := func(graph string) string {
		g, err := r.reg.Latest(graph)
		if err != nil {
			t.Fatal(err)
		}
		return g.Manifest().GraphHash
	}
	created := func(id string) time.Time {
		run, err := r.e.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return run.CreatedAt
	}
	tests := []struct {
		name string
		q    engine.RunQuery
		want []string
	}{
		{"all", engine.RunQuery{}, newestFirst(all)},
		{"graph", engine.RunQuery{GraphName: "support_agent"}, newestFirst(waiting)},
		{"completed", engine.RunQuery{Status: engine.StatusCompleted}, newestFirst(pipelines)},
		{"running", engine.RunQuery{Status: engine.StatusRunning}, newestFirst(waiting)},
		{"pending", engine.RunQuery{Status: engine.StatusPending}, []string{"pending"}},
		{"graph hash", engine.RunQuery{GraphHash: hash("support_agent")}, newestFirst(waiting)},
		{"graph and hash, running", engine.RunQuery{GraphName: "support_agent", GraphHash: hash("support_agent"), Status: engine.StatusRunning}, newestFirst(waiting)},
		{"hash of another graph", engine.RunQuery{GraphName: "support_agent", GraphHash: hash("data_pipeline")}, nil},
		{"created window", engine.RunQuery{CreatedAfter: created("run-10"), CreatedBefore: created("run-20")}, newestFirst(all[10:20])},
	}
	for _, tt := range tests {
		for _, limit := range []int{1, 3, 7, 100} {
			if got := pageAll(t, r, tt.q, limit); !slices.Equal(got, tt.want) {
				t.Errorf("%s, limit %d:\n got %v\nwant %v", tt.name, limit, got, tt.want)
			}
		}
	}
}

// TestEngine_ListRuns_StorageOpsAcrossShards: a page reads each shard once (a few rows over
// its share of the page) plus the head of each listed run, and a shard found exhausted is
// not read again on the next pages.
func TestEngine_ListRuns_StorageOpsAcrossShards(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	for i := range 60 {
		r.start(t, "data_pipeline", fmt.Sprintf("p%02d", i), `{"source_url":"u"}`)
	}
	r.drive(t)
	var mu sync.Mutex
	perPartition := map[string]int{}
	r.fstore.BeforeQuery = func(q engine.Query) error {
		mu.Lock()
		defer mu.Unlock()
		perPartition[q.PartitionKey]++
		return nil
	}
	r.counts.Reset()
	page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 10 || page.ContinuationToken == "" {
		t.Fatalf("first page: %d runs, token %q", len(page.Runs), page.ContinuationToken)
	}
	if q, g := r.counts.Queries.Load(), r.counts.Gets.Load(); q != 8 || g != 10 {
		t.Errorf("first page of 10: %d queries and %d head reads, want 8 (one per shard) and 10", q, g)
	}
	for tok := page.ContinuationToken; tok != ""; {
		page, err := r.e.ListRuns(t.Context(), engine.RunQuery{Limit: 10, ContinuationToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		tok = page.ContinuationToken
	}
	for pk, n := range perPartition {
		if !strings.HasPrefix(pk, "~runs") || n > 8 {
			t.Errorf("partition %q read %d times", pk, n)
		}
	}
}

// TestEngine_ListRuns_MalformedToken_InvalidQuery: a token ListRuns did not write is the
// invalid-continuation error, before any storage read.
func TestEngine_ListRuns_MalformedToken_InvalidQuery(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	r.start(t, "data_pipeline", "x", `{"source_url":"u"}`)
	enc := base64.RawURLEncoding.EncodeToString
	eight := func(p string) string {
		return `["","","","","","","",` + p + `]`
	}
	r.counts.Reset()
	for _, tok := range []string{
		"not base64!", enc([]byte("not json")), enc([]byte(`["",""]`)), enc([]byte(eight(`"rowkey"`))),
		enc([]byte(eight(`"0000000000000000001_a/b"`))), enc([]byte(eight(`5`))), enc([]byte(`{"a":1}`)),
	} {
		for _, q := range []engine.RunQuery{{ContinuationToken: tok}, {GraphName: "a/b", ContinuationToken: tok}} {
			if _, err := r.e.ListRuns(t.Context(), q); !errors.Is(err, engine.ErrInvalidQuery) {
				t.Errorf("token %q: %v, want ErrInvalidQuery", tok, err)
			}
		}
	}
	if n := r.counts.Table(); n != 0 {
		t.Errorf("%d table operations for malformed tokens", n)
	}
	if _, err := r.e.ListRuns(t.Context(), engine.RunQuery{ContinuationToken: enc([]byte(eight(`"~"`)))}); err != nil {
		t.Errorf("a well-formed token: %v", err)
	}
}

// FuzzEngine_ListRuns_Token: any continuation token either lists (a token of per-shard
// positions) or is refused with ErrInvalidQuery before storage is read; never a panic, never
// another error. A token ListRuns returned always continues.
func FuzzEngine_ListRuns_Token(f *testing.F) {
	r := newRigETags(f, true, engine.Options{Logger: quiet}, false)
	for i := range 5 {
		r.start(f, "data_pipeline", fmt.Sprintf("f%d", i), `{"source_url":"u"}`)
	}
	page, err := r.e.ListRuns(f.Context(), engine.RunQuery{Limit: 2})
	if err != nil || page.ContinuationToken == "" {
		f.Fatalf("seed page: %v %q", err, page.ContinuationToken)
	}
	enc := base64.RawURLEncoding.EncodeToString
	f.Add(page.ContinuationToken)
	f.Add(enc([]byte(`["","","","","","","","~"]`)))
	f.Add(enc([]byte(`["9223372036854775807_x","","","","","","","~"]`)))
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, tok string) {
		before := r.counts.Table()
		_, err := r.e.ListRuns(t.Context(), engine.RunQuery{Limit: 3, ContinuationToken: tok})
		if err != nil && !errors.Is(err, engine.ErrInvalidQuery) {
			t.Fatalf("token %q: %v", tok, err)
		}
		if err != nil && r.counts.Table() != before {
			t.Fatalf("token %q refused after %d storage operations", tok, r.counts.Table()-before)
		}
	})
}

// FuzzValidEventName: a name ValidEventName accepts is valid UTF-8 of 1–256 UTF-16 code units
// without a control character, and a valid graph name is a valid event name.
func FuzzValidEventName(f *testing.F) {
	for _, s := range []string{"approval", "", "a\x00", strings.Repeat("😀", 128), "a/b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ok := engine.ValidEventName(name)
		if engine.ValidGraphName(name) && !ok {
			t.Fatalf("%q: a valid graph name but not a valid event name", name)
		}
		if !ok {
			return
		}
		if n := len(utf16.Encode([]rune(name))); n < 1 || n > 256 {
			t.Fatalf("%q accepted with %d UTF-16 code units", name, n)
		}
		if !utf8.ValidString(name) {
			t.Fatalf("%q accepted: not UTF-8", name)
		}
		for _, c := range name {
			if c < 0x20 || c >= 0x7f && c <= 0x9f {
				t.Fatalf("%q accepted with %U", name, c)
			}
		}
	})
}
