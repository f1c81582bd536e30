package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// TestEngine_RewindRuns_AfterOutage: after a simulated outage, a rewind by filter rewinds
// every run of the graph that failed in the window once, page by page, reading only the
// failure index; a second pass rewinds none.
func TestEngine_RewindRuns_AfterOutage(t *testing.T) {
	t.Parallel()
	o := newOutage()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, outageChain(t, "rw_bulk", o, false), outageChain(t, "rw_other", o, false))
	ctx := context.Background()
	for i := range 20 { // runs that completed: no rewind reads them
		r.start(t, "rw_bulk", fmt.Sprintf("done-%d", i), `{"n":0}`)
	}
	r.drive(t)
	o.down.Store(true)
	r.start(t, "rw_bulk", "before-outage", `{"n":0}`) // fails before the window
	r.drive(t)
	clk.advance(time.Hour)
	outageStart := clk.now()
	var want []string
	for i := range 7 {
		want = append(want, r.start(t, "rw_bulk", fmt.Sprintf("outage-%d", i), `{"n":0}`))
		clk.advance(time.Second)
	}
	r.start(t, "rw_other", "other-graph", `{"n":0}`)
	r.drive(t)
	clk.advance(time.Hour)
	o.down.Store(false)
	for _, id := range append(slices.Clone(want), "before-outage", "other-graph") {
		assertRunStatus(t, r, id, engine.StatusFailed)
	}

	var mu sync.Mutex
	var parts []string
	r.fstore.BeforeQuery = func(q engine.Query) error {
		mu.Lock()
		parts = append(parts, q.PartitionKey)
		mu.Unlock()
		return nil
	}
	f := engine.RewindFilter{GraphName: "rw_bulk", FailedAfter: outageStart, FailedBefore: outageStart.Add(time.Hour), Limit: 3, Reason: "outage over"}
	var got []string
	calls := 0
	for {
		res, err := r.e.RewindRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rewound) > 3 {
			t.Fatalf("a call of limit 3 rewound %d", len(res.Rewound))
		}
		got = append(got, res.Rewound...)
		calls++
		if f.ContinuationToken = res.ContinuationToken; f.ContinuationToken == "" {
			break
		}
	}
	r.fstore.BeforeQuery = nil
	if !slices.Equal(got, want) {
		t.Fatalf("rewound %v, want %v (oldest failure first)", got, want)
	}
	if calls < 3 {
		t.Fatalf("%d calls for 7 runs at limit 3", calls)
	}
	for _, p := range parts {
		if !strings.HasPrefix(p, "~failed-") || !strings.HasSuffix(p, "~rw_bulk") {
			t.Fatalf("a rewind by filter queried partition %q: only the graph's failure index may be read", p)
		}
	}
	r.drive(t)
	for _, id := range want {
		assertRunStatus(t, r, id, engine.StatusCompleted)
	}
	assertRunStatus(t, r, "before-outage", engine.StatusFailed)
	assertRunStatus(t, r, "other-graph", engine.StatusFailed)
	if c := o.count("n1"); c != 20+1+7+1+7 {
		t.Fatalf("n1 ran %d times, want %d: each rewound run once more", c, 20+1+7+1+7)
	}

	// Again over the same window: nothing is Failed from those failures any more.
	res, err := r.e.RewindRuns(ctx, engine.RewindFilter{GraphName: "rw_bulk", FailedAfter: outageStart})
	if err != nil || len(res.Rewound) != 0 || res.ContinuationToken != "" {
		t.Fatalf("second pass = %+v, %v; want none", res, err)
	}
	// Every graph, from the start of time: the two left.
	res, err = r.e.RewindRuns(ctx, engine.RewindFilter{FailedAfter: engine.MinCreatedFilter})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Rewound)
	if !slices.Equal(res.Rewound, []string{"before-outage", "other-graph"}) {
		t.Fatalf("rewind of every graph = %v", res.Rewound)
	}
}

// TestEngine_RewindRuns_Owner: an owner's rewind by filter rewinds that owner's runs only.
func TestEngine_RewindRuns_Owner(t *testing.T) {
	t.Parallel()
	o := newOutage()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, outageChain(t, "rw_own", o, false))
	ctx := context.Background()
	o.down.Store(true)
	start := clk.now()
	for _, owner := range []string{"alice", "bob", "alice"} {
		_, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "rw_own", InstanceID: owner + fmt.Sprint(clk.now().Unix()),
			Input: []byte(`{"n":0}`), Metadata: []byte(`{"owner":"` + owner + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Second)
	}
	r.drive(t)
	o.down.Store(false)
	var parts []string
	r.fstore.BeforeQuery = func(q engine.Query) error {
		parts = append(parts, q.PartitionKey)
		return nil
	}
	res, err := r.e.RewindRuns(ctx, engine.RewindFilter{Owner: "alice", FailedAfter: start})
	r.fstore.BeforeQuery = nil
	if len(parts) != 1 || !strings.HasPrefix(parts[0], "~ofailed~") {
		t.Fatalf("alice's rewind queried %q: only her partition of the failure index may be read", parts)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rewound) != 2 || !strings.HasPrefix(res.Rewound[0], "alice") || !strings.HasPrefix(res.Rewound[1], "alice") {
		t.Fatalf("alice's rewind = %v", res.Rewound)
	}
	res, err = r.e.RewindRuns(ctx, engine.RewindFilter{Owner: "bob", GraphName: "rw_own", FailedAfter: start})
	if err != nil || len(res.Rewound) != 1 || !strings.HasPrefix(res.Rewound[0], "bob") {
		t.Fatalf("bob's rewind = %v, %v", res.Rewound, err)
	}
}

// TestEngine_RewindRuns_Invalid: filters RewindRuns refuses, before reading anything.
func TestEngine_RewindRuns_Invalid(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	now := time.Now()
	for _, f := range []engine.RewindFilter{
		{},
		{FailedAfter: now, FailedBefore: now},
		{FailedAfter: now, Limit: 101},
		{FailedAfter: now, Limit: -1},
		{FailedAfter: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{FailedAfter: now, ContinuationToken: "not a token"},
	} {
		if _, err := r.e.RewindRuns(context.Background(), f); !errors.Is(err, engine.ErrInvalidQuery) {
			t.Errorf("RewindRuns(%+v) = %v, want ErrInvalidQuery", f, err)
		}
	}
}

// TestEngine_RewindRuns_IndexedBeforeItsCommit: a failure is in the failure index before the
// commit that makes its run Failed, so a rewind by filter that reads a run as Failed finds it.
func TestEngine_RewindRuns_IndexedBeforeItsCommit(t *testing.T) {
	t.Parallel()
	o := newOutage()
	r := newRig(t, engine.Options{}, false, outageChain(t, "rw_early", o, false))
	o.down.Store(true)
	var seen, indexed bool
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if len(ops) == 0 || ops[0].Entity.RowKey != "r" || ops[0].Entity.Properties["Status"] != string(engine.StatusFailed) {
			return nil
		}
		seen = true
		for s := range 8 {
			page, err := r.store.Query(context.Background(), engine.Query{PartitionKey: fmt.Sprintf("~failed-%d~rw_early", s)})
			if err != nil {
				t.Error(err)
			}
			for _, ent := range page.Entities {
				indexed = indexed || ent.Properties["RunID"] == "rw-early"
			}
		}
		return nil
	}
	r.start(t, "rw_early", "rw-early", `{"n":0}`)
	r.drive(t)
	r.fstore.BeforeSubmit = nil
	if !seen || !indexed {
		t.Fatalf("failing commit seen %v, its failure indexed before it %v", seen, indexed)
	}
}

// TestEngine_RewindRuns_WindowClosesAtFirstCall: the pages of one rewind by filter without an
// end never reach the failures of the runs it rewound that failed again (the outage is not
// over): each run is rewound once.
//
// Sixteen runs put two or more in a shard, whose pages would otherwise go on to the new rows.
func TestEngine_RewindRuns_WindowClosesAtFirstCall(t *testing.T) {
	t.Parallel()
	o := newOutage()
	clk := newFakeClock()
	r := newRig(t, engine.Options{Clock: clk.now}, false, outageChain(t, "rw_chase", o, false))
	ctx := context.Background()
	o.down.Store(true)
	start := clk.now()
	for i := range 16 { // two or more per shard
		r.start(t, "rw_chase", fmt.Sprintf("chase-%d", i), `{"n":0}`)
	}
	r.drive(t)
	f := engine.RewindFilter{GraphName: "rw_chase", FailedAfter: start, Limit: 1}
	var got []string
	for calls := 0; ; calls++ {
		res, err := r.e.RewindRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Rewound...)
		clk.advance(time.Second)
		r.drive(t) // the rewound runs fail again, later
		if f.ContinuationToken = res.ContinuationToken; f.ContinuationToken == "" {
			break
		}
		if calls > 40 {
			t.Fatalf("the pages chase the failures they cause: rewound %v", got)
		}
	}
	slices.Sort(got)
	if len(got) != 16 || len(slices.Compact(slices.Clone(got))) != 16 {
		t.Fatalf("rewound %v, want each of the 16 runs once", got)
	}
	// A forged or foreign token is refused.
	for _, tok := range []string{"x", "123", "1.abc"} {
		if _, err := r.e.RewindRuns(ctx, engine.RewindFilter{FailedAfter: start, ContinuationToken: tok}); !errors.Is(err, engine.ErrInvalidQuery) {
			t.Fatalf("token %q: %v", tok, err)
		}
	}
}
