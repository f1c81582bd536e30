package durabletest_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// RunState reads a live run's state and where it stands, here a ticket waiting for its
// approval, as GET /api/runs/{instance_id}/state answers it.
func ExampleKit_RunState() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	kit.Start("t1", Ticket{Subject: "refund"})

	st := kit.RunState("t1")
	if !slices.Equal(st.At.WaitingFor, []string{"approval"}) || len(st.At.Nodes) != 0 {
		t.Fatalf("t1 stands at %+v", st.At)
	}
	if s := kit.State("t1"); s.Status != "triaged" || s.Approved {
		t.Fatalf("state while waiting: %+v", s)
	}
}

// TestKit_RunState_WaitingForApproval runs ExampleKit_RunState's body and follows the run to its
// end: the state while it waits is the triaged ticket, then the closed one.
func TestKit_RunState_WaitingForApproval(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	kit.StartPending("t1", Ticket{Subject: "refund"})
	if st := kit.RunState("t1"); st.RuntimeStatus != durabletest.StatusPending || !slices.Equal(st.At.Nodes, []string{"triage"}) || st.Step != 0 ||
		kit.State("t1") != (Ticket{Subject: "refund"}) {
		t.Fatalf("pending: %+v, state %s", st, st.State)
	}
	kit.Drive()
	st := kit.RunState("t1")
	if st.InstanceID != "t1" || st.GraphName != "tickets" || st.RuntimeStatus != durabletest.StatusRunning || st.Generation != 0 ||
		!slices.Equal(st.At.WaitingFor, []string{"approval"}) || len(st.At.Nodes) != 0 || st.At.Branches != nil {
		t.Fatalf("waiting: %+v", st)
	}
	if got := kit.State("t1"); got != (Ticket{Subject: "refund", Status: "triaged"}) {
		t.Fatalf("state while waiting: %+v", got)
	}
	waitingStep := st.Step
	kit.Send("t1", "approval", Approval{OK: true})
	st = kit.RunState("t1")
	if st.RuntimeStatus != durabletest.StatusCompleted || len(st.At.Nodes) != 0 || len(st.At.WaitingFor) != 0 || st.Step <= waitingStep {
		t.Fatalf("completed: %+v", st)
	}
	if got, want := kit.State("t1"), kit.Final("t1"); got != want {
		t.Fatalf("state %+v, final %+v", got, want)
	}
	h := kit.History("t1")
	if got, want := kit.State("t1"), kit.StateAfter("t1", h[len(h)-1].Sequence); got != want {
		t.Fatalf("state %+v, the fold of the history %+v", got, want)
	}
}

// TestKit_RunState_WaitDeadline: a wait with a timeout says when it ends.
func TestKit_RunState_WaitDeadline(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{Policy: durable.GraphPolicy{WaitTimeout: time.Hour, WaitTimeoutNode: "close"}})
	kit.Start("t1", Ticket{Subject: "refund"})
	if st := kit.RunState("t1"); !st.At.WaitDeadline.Equal(kit.Now().Add(time.Hour)) {
		t.Fatalf("deadline %v, want %v", st.At.WaitDeadline, kit.Now().Add(time.Hour))
	}
}

// TestKit_RunState_Sleeping: a sleeping run names its next node and its wake-up, until it wakes.
func TestKit_RunState_Sleeping(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, reminderGraph(24*time.Hour), durabletest.Options{})
	kit.Start("r1", Reminder{})
	st := kit.RunState("r1")
	if !st.At.SleepingUntil.Equal(kit.Now().Add(24*time.Hour)) || !slices.Equal(st.At.Nodes, []string{"remind"}) || !st.At.RetryAt.IsZero() {
		t.Fatalf("sleeping: %+v", st.At)
	}
	if got := kit.State("r1"); len(got.Sent) != 1 {
		t.Fatalf("state while sleeping: %+v", got)
	}
	kit.Advance(24 * time.Hour)
	if got := kit.State("r1"); len(got.Sent) != 2 {
		t.Fatalf("state after the first sleep: %+v", got)
	}
}

// TestKit_RunState_FanOut: in a fan-out whose first branch backs off to retry, the state
// counts the settled branches, names the node still to run and when it retries; once the
// branch ran, the run is complete and its state the join's.
func TestKit_RunState_FanOut(t *testing.T) {
	t.Parallel()
	var (
		ran []int
		mu  sync.Mutex
	)
	kit := durabletest.New(t, tallyGraph(t, &ran, &mu), durabletest.Options{
		Faults: map[string]int{"count": 1},
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Minute}},
	})
	kit.Start("f1", tally{N: 4})
	st := kit.RunState("f1")
	if st.At.Branches == nil || *st.At.Branches != (durabletest.BranchCount{Done: 3, Total: 4}) || !slices.Equal(st.At.Nodes, []string{"count"}) ||
		!st.At.RetryAt.Equal(kit.Now().Add(time.Minute)) {
		t.Fatalf("in the fan-out: %+v (branches %+v)", st.At, st.At.Branches)
	}
	if got := kit.State("f1"); got.N != 4 || len(got.Seen) != 0 {
		t.Fatalf("state before the join: %+v", got)
	}
	kit.Advance(time.Minute)
	if got, want := kit.State("f1"), kit.Final("f1"); !reflect.DeepEqual(got, want) || got.Total != 6 {
		t.Fatalf("state %+v, final %+v", got, want)
	}
	if st := kit.RunState("f1"); st.At.Branches != nil || len(st.At.Nodes) != 0 {
		t.Fatalf("finished: %+v", st.At)
	}
}

// TestKit_RunState_NodeRetry: a node backing off after a failed attempt names itself and its
// next attempt.
func TestKit_RunState_NodeRetry(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{
		Faults: map[string]int{"triage": 1},
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second}},
	})
	kit.Start("t1", Ticket{Subject: "refund"})
	st := kit.RunState("t1")
	if !slices.Equal(st.At.Nodes, []string{"triage"}) || !st.At.RetryAt.Equal(kit.Now().Add(time.Second)) || !st.At.SleepingUntil.IsZero() {
		t.Fatalf("backing off: %+v", st.At)
	}
	raw, _ := json.Marshal(Ticket{Subject: "refund"})
	if string(st.State) != string(raw) {
		t.Fatalf("state %s, want %s", st.State, raw)
	}
}

// TestKit_RunState_Unknown: an unknown run fails the test.
func TestKit_RunState_Unknown(t *testing.T) {
	t.Parallel()
	rec := &fatalRecorder{TB: t}
	kit := durabletest.New(rec, ticketGraph(), durabletest.Options{})
	rec.on(func() { kit.RunState("nope") })
	if len(rec.failures) != 1 || !strings.Contains(rec.failures[0], "nope") {
		t.Fatalf("failures %v", rec.failures)
	}
}
