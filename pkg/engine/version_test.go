package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// approvalGraph is enginetest.ApprovalGraph: "approvals", waiting for "go", then "done"
// writes result "v<version>".
func approvalGraph(t testing.TB, version string) durable.Graph {
	return enginetest.ApprovalGraph(t, version)
}

// deploy returns a rig on r's storage whose engine has another registry and r's clock: a
// process restarted with other graph versions.
func (r *rig) deploy(t *testing.T, clock func() time.Time, gs ...durable.Graph) *rig {
	t.Helper()
	reg := regOf(t, gs...)
	e, err := engine.New(engine.Options{Registry: reg, Store: r.fstore, Queue: r.fqueue, Payloads: r.payloads, Clock: clock,
		Logger: r.e.Options().Logger, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	c := *r
	c.e, c.reg = e, reg
	return &c
}

// TestEngine_Redeploy_OldRunsFinishOnTheirVersionOrWaitForIt: runs of v1 wait for an event;
// the process restarts with v1 and v2: the old runs finish on v1 and new runs start on v2.
// Restarted with v2 only, the v1 runs (waiting, or not started yet) stay unfinished with a
// status that names the version they wait for — not failed — and finish once v1 is back.
func TestEngine_Redeploy_OldRunsFinishOnTheirVersionOrWaitForIt(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	v1, v2 := approvalGraph(t, "1"), approvalGraph(t, "2")
	h1 := v1.Manifest().GraphHash
	first := newRig(t, engine.Options{Registry: regOf(t, v1), Clock: clk.now, SweepInterval: -1}, false)
	for i := range 4 {
		first.start(t, "approvals", fmt.Sprintf("old%d", i), `{}`)
	}
	first.drive(t)
	for i := range 4 {
		if run, _ := first.e.GetRun(t.Context(), fmt.Sprintf("old%d", i)); run.RuntimeStatus != engine.StatusRunning {
			t.Fatalf("old%d: %s, want waiting", i, run.RuntimeStatus)
		}
	}
	first.start(t, "approvals", "unstarted", `{}`) // its work item is still queued at the redeploy

	// v1 and v2 side by side: the old runs finish on v1, new runs start on v2.
	both := first.deploy(t, clk.now, durable.Previous(v1), v2)
	for _, id := range []string{"old0", "old1"} {
		if err := both.e.RaiseEvent(t.Context(), id, "go", nil); err != nil {
			t.Fatal(err)
		}
	}
	both.start(t, "approvals", "new", `{"approved":true}`)
	both.drive(t)
	for id, want := range map[string]string{"old0": "v1", "old1": "v1", "unstarted": "", "new": "v2"} {
		run, _ := both.e.GetRun(t.Context(), id)
		switch {
		case want == "":
			if run.RuntimeStatus != engine.StatusRunning {
				t.Fatalf("%s: %s, want waiting on v1", id, run.RuntimeStatus)
			}
		case run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["result"] != want:
			t.Fatalf("%s: %s %s, want completed on %s", id, run.RuntimeStatus, run.Output, want)
		}
	}

	// v2 only: what v1 runs there are stay unfinished and say why.
	first.start(t, "approvals", "pending", `{}`) // still started on v1 by an old process
	only2 := first.deploy(t, clk.now, v2)
	for _, id := range []string{"old2", "unstarted"} {
		// Raised on an instance that still has v1 (one without it refuses what it cannot check).
		if err := first.e.RaiseEvent(t.Context(), id, "go", nil); err != nil {
			t.Fatal(err)
		}
	}
	r0 := only2.counts.Queue()
	only2.drive(t)
	for range 3 { // the back-off: each look puts the item back for longer
		clk.advance(10 * time.Minute)
		only2.drive(t)
	}
	if only2.counts.Queue() == r0 {
		t.Fatal("no work item was handled while v1 was gone")
	}
	for id, want := range map[string]engine.RunStatus{"old2": engine.StatusRunning, "unstarted": engine.StatusRunning, "pending": engine.StatusPending, "old3": engine.StatusRunning} {
		run, err := only2.e.GetRun(t.Context(), id)
		if err != nil || run.RuntimeStatus != want {
			t.Fatalf("%s: %s %v, want %s", id, run.RuntimeStatus, err, want)
		}
		hash, waits := run.WaitingForVersion()
		if id == "old3" { // waiting for an event that did not come: nothing looked at it
			if waits {
				t.Fatalf("old3 says it waits for version %s", hash)
			}
			continue
		}
		p, _ := run.Progress()
		if !waits || hash != h1 || p.Message != engine.VersionUnavailableMessage("approvals", "1", h1) || p.GraphHash != h1 {
			t.Fatalf("%s: custom status %s, want it to name version 1 (%s)", id, run.CustomStatus, h1)
		}
		if !strings.Contains(p.Message, "'"+h1+"'") {
			t.Fatalf("message %q does not name the hash", p.Message)
		}
	}
	if n := only2.queue.Len(); n != 3 {
		t.Fatalf("%d work items queued, want one per parked run", n)
	}

	// v1 is back: the parked runs continue where they stopped, on v1.
	back := first.deploy(t, clk.now, v2, durable.Previous(v1))
	clk.advance(10 * time.Minute)
	back.drive(t)
	if err := back.e.RaiseEvent(t.Context(), "pending", "go", nil); err != nil {
		t.Fatal(err)
	}
	back.drive(t)
	for _, id := range []string{"old2", "unstarted", "pending"} {
		run, _ := back.e.GetRun(t.Context(), id)
		if run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["result"] != "v1" || run.GraphVersion != "1" {
			t.Fatalf("%s: %s %s, want completed on v1", id, run.RuntimeStatus, run.Output)
		}
		if _, waits := run.WaitingForVersion(); waits || strings.Contains(string(run.CustomStatus), "waiting_for_version") {
			t.Fatalf("%s: finished run still says it waits for its version: %s", id, run.CustomStatus)
		}
		rows := checkHistory(t, back.history(t, id))
		if strings.Contains(strings.Join(rows, " "), engine.HistoryRunFailed) {
			t.Fatalf("%s: history holds a failure: %v", id, rows)
		}
	}
}

// TestEngine_VersionUnavailable_NoPoisonNoUserCode: a run whose version is missing is put
// back however often it is delivered (never failed as poison) and costs no table write
// after the first mark.
func TestEngine_VersionUnavailable_NoPoisonNoUserCode(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	v1, v2 := approvalGraph(t, "1"), approvalGraph(t, "2")
	r := newRig(t, engine.Options{Registry: regOf(t, v1), Clock: clk.now, SweepInterval: -1}, false)
	id := r.start(t, "approvals", "", `{"approved":true}`)
	only2 := r.deploy(t, clk.now, v2)
	only2.drive(t)
	r.counts.Reset()
	for range 10 {
		clk.advance(time.Hour)
		if n := only2.drive(t); n != 1 {
			t.Fatalf("%d items handled, want the parked run's one", n)
		}
	}
	if w := r.counts.Submits.Load(); w != 0 {
		t.Errorf("%d table writes while parked, want 0 after the first mark", w)
	}
	run, _ := only2.e.GetRun(t.Context(), id)
	if run.RuntimeStatus != engine.StatusPending {
		t.Fatalf("status %s after 10 deliveries, want Pending", run.RuntimeStatus)
	}
	if _, waits := run.WaitingForVersion(); !waits {
		t.Fatalf("custom status %s", run.CustomStatus)
	}
}

// Issue #32: a parked run does not multiply its work items per event. Its version gone from
// the process that took up its wake-up, the run is parked with one item on the queue, coming
// back with a back-off; events raised meanwhile (on an instance that has the version) are
// stored and enqueue nothing more: the parked item takes them up. Back on v1, the run
// completes.
func TestEngine_ParkedRun_EventsAddNoWorkItems(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	v1, v2 := approvalGraph(t, "1"), approvalGraph(t, "2")
	first := newRig(t, engine.Options{Registry: regOf(t, v1), Clock: clk.now, SweepInterval: -1}, false)
	id := first.start(t, "approvals", "", `{}`)
	first.drive(t) // waiting for "go"
	only2 := first.deploy(t, clk.now, v2)
	if err := first.e.RaiseEvent(t.Context(), id, "go", nil); err != nil {
		t.Fatal(err)
	}
	only2.drive(t) // the wake-up meets a process without v1: parked
	if run, _ := first.e.GetRun(t.Context(), id); !strings.Contains(string(run.CustomStatus), "waiting_for_version") {
		t.Fatalf("custom status %s, want the run parked", run.CustomStatus)
	}
	if n := first.queue.Len(); n != 1 {
		t.Fatalf("%d work items queued for the parked run, want 1", n)
	}
	for range 5 {
		if err := first.e.RaiseEvent(t.Context(), id, "go", nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := first.queue.Len(); n != 1 {
		t.Fatalf("%d work items queued after 5 events on the parked run, want still 1", n)
	}
	back := first.deploy(t, clk.now, v2, durable.Previous(v1))
	clk.advance(10 * time.Minute)
	back.drive(t)
	if run, _ := back.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted || stateOf(t, run)["result"] != "v1" {
		t.Fatalf("%s %s, want completed on v1", run.RuntimeStatus, run.Output)
	}
}

// Issue #32: an instance reports the graph versions that still have unfinished runs but are
// not registered on it, from the active run index alone, with a bounded read: past its limit
// it stops, says so, and has read no more rows than the limit.
func TestEngine_UnregisteredVersions_FromTheActiveIndex_Bounded(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	v1, v2 := approvalGraph(t, "1"), approvalGraph(t, "2")
	first := newRig(t, engine.Options{Registry: regOf(t, v1), Clock: clk.now, SweepInterval: -1}, false)
	const waiting = 40
	for range waiting {
		first.start(t, "approvals", "", `{}`)
	}
	first.start(t, "approvals", "", `{"approved":true}`) // finished: not counted
	first.drive(t)

	if got, truncated, err := first.e.UnregisteredVersions(t.Context(), 0); err != nil || truncated || len(got) != 0 {
		t.Fatalf("on the instance that has v1: %+v %v %v, want none", got, truncated, err)
	}
	only2 := first.deploy(t, clk.now, v2)
	got, truncated, err := only2.e.UnregisteredVersions(t.Context(), 0)
	want := []engine.UnregisteredVersion{{GraphName: "approvals", GraphVersion: "1", GraphHash: v1.Manifest().GraphHash, Unfinished: waiting}}
	if err != nil || truncated || !slices.Equal(got, want) {
		t.Fatalf("on an instance with v2 only: %+v %v %v, want %+v", got, truncated, err, want)
	}

	var queries, rows atomic.Int32
	only2.fstore.BeforeQuery = func(q engine.Query) error {
		queries.Add(1)
		rows.Add(int32(max(q.Limit, 0)))
		return nil
	}
	const limit = 18 // 2 rows per index shard
	got, truncated, err = only2.e.UnregisteredVersions(t.Context(), limit)
	if err != nil || !truncated || len(got) != 1 || got[0].Unfinished > limit || got[0].Unfinished == 0 {
		t.Fatalf("bounded read: %+v %v %v, want a truncated lower bound", got, truncated, err)
	}
	if q, r := queries.Load(), rows.Load(); q > 9 || r > limit {
		t.Fatalf("bounded read of %d rows made %d queries asking for %d rows", limit, q, r)
	}
}
