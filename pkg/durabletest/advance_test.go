package durabletest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

type expense struct {
	Amount  int    `json:"amount"`
	Outcome string `json:"outcome"`
	Tries   int    `json:"tries"`
}

type verdict struct {
	OK bool `json:"ok" durable:"required"`
}

// expenseGraph: "submit" fails its first `failures` attempts, then waits for "approval" for 72
// hours (RouteDecision.Within); "expire" records how it was reached.
func expenseGraph(t testing.TB, failures int) durable.GraphRegistration[expense] {
	t.Helper()
	b := durable.NewManifestBuilder[expense]("expenses")
	b.SetEntrypoint("submit")
	tries := 0
	_ = b.AddStep("submit", func(_ context.Context, s expense) (expense, error) {
		if tries++; tries <= failures {
			return s, errors.New("flaky")
		}
		s.Tries = tries
		return s, nil
	}, durable.WithDecide(func(context.Context, expense) (durable.RouteDecision, error) {
		return durable.WaitForEvent("approval", "decide").Within(72*time.Hour, "expire"), nil
	}))
	_ = b.AddStep("decide", func(ctx context.Context, s expense) (expense, error) {
		if info, _ := durable.StepInfoFrom(ctx); info.ReachedByTimeout() {
			s.Outcome = "impossible"
		}
		return s, nil
	}, durable.Terminal())
	_ = b.AddStep("expire", func(ctx context.Context, s expense) (expense, error) {
		if info, ok := durable.StepInfoFrom(ctx); ok && info.ReachedByTimeout() {
			s.Outcome = "expired waiting for " + info.TimedOutWaitingFor
		}
		return s, nil
	}, durable.Terminal())
	_ = durable.OnEvent(b, "approval", func(_ context.Context, s expense, v verdict) (expense, error) {
		s.Outcome = map[bool]string{true: "approved", false: "rejected"}[v.OK]
		return s, nil
	})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestKit_Advance_FiresEveryTimerDueInOrder (issue #21): one Advance fires the retry
// back-offs (1 s, then 2 s, the second scheduled while advancing) and the wait's own timeout.
func TestKit_Advance_FiresEveryTimerDueInOrder(t *testing.T) {
	kit := durabletest.New(t, expenseGraph(t, 2), durabletest.Options{Policy: durable.GraphPolicy{
		Retry: durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second},
	}})
	start := kit.Now()
	if run := kit.Start("e1", expense{Amount: 5}); run.RuntimeStatus != durabletest.StatusRunning {
		t.Fatalf("after start: %s", run.RuntimeStatus)
	}
	kit.Advance(3 * time.Second) // both back-offs
	if ev, ok := kit.Run("e1").WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("after 3s: waiting for %q (%v), want the approval wait", ev, ok)
	}
	if got := kit.Now().Sub(start); got != 3*time.Second {
		t.Fatalf("clock moved %s, want 3s", got)
	}
	kit.Advance(72 * time.Hour) // the wait's own timeout, set three seconds in
	if got := kit.Final("e1"); got.Outcome != "expired waiting for approval" || got.Tries != 3 {
		t.Fatalf("final %+v, want expired after 3 tries", got)
	}
}

// TestKit_Within_OverridesThePolicy: the decision's timeout wins over GraphPolicy, and an
// event in time goes to the resume node, which was not reached by a timeout.
func TestKit_Within_OverridesThePolicy(t *testing.T) {
	kit := durabletest.New(t, expenseGraph(t, 0), durabletest.Options{Policy: durable.GraphPolicy{WaitTimeout: time.Hour}})
	kit.Start("late", expense{})
	kit.Advance(2 * time.Hour)
	if _, ok := kit.Run("late").WaitingFor(); !ok {
		t.Fatal("the policy's one hour ended a wait of 72 hours")
	}
	kit.Start("ok", expense{})
	kit.Send("ok", "approval", verdict{OK: true})
	if got := kit.Final("ok"); got.Outcome != "approved" {
		t.Fatalf("final %+v", got)
	}
}

// TestKit_StartPending_EventBeforeTheWait: an event sent before the run ran is kept and
// applied when the run reaches the wait.
func TestKit_StartPending_EventBeforeTheWait(t *testing.T) {
	kit := durabletest.New(t, expenseGraph(t, 0), durabletest.Options{})
	if run := kit.StartPending("e1", expense{Amount: 1}); run.RuntimeStatus != durabletest.StatusPending {
		t.Fatalf("StartPending: %s, want Pending", run.RuntimeStatus)
	}
	kit.Send("e1", "approval", verdict{OK: false})
	if got := kit.Final("e1"); got.Outcome != "rejected" {
		t.Fatalf("final %+v", got)
	}
}

// TestKit_Faults_EventsStillCheckedAtTheDoor: a kit with faults checks typed payloads as
// the engine does without them.
func TestKit_Faults_EventsStillCheckedAtTheDoor(t *testing.T) {
	kit := durabletest.New(t, expenseGraph(t, 0), durabletest.Options{Faults: map[string]int{"decide": 1}})
	kit.Start("e1", expense{})
	var pe *durable.EventPayloadError
	if err := kit.Engine().RaiseEvent(t.Context(), "e1", "approval", []byte(`{"ok": "yes"}`)); !errors.As(err, &pe) || pe.Field != "ok" {
		t.Fatalf("wrong payload type under faults: %v, want an EventPayloadError naming ok", err)
	}
}

// TestKit_PolicyTimeoutNode_ToldByStepInfo: a wait without its own timeout takes the
// policy's, and the policy's timeout node sees how it was reached.
func TestKit_PolicyTimeoutNode_ToldByStepInfo(t *testing.T) {
	b := durable.NewManifestBuilder[expense]("plain")
	b.SetEntrypoint("ask")
	_ = b.AddStep("ask", func(_ context.Context, s expense) (expense, error) { return s, nil },
		durable.WithDecide(func(context.Context, expense) (durable.RouteDecision, error) {
			return durable.WaitForEvent("approval", "expire"), nil
		}))
	_ = b.AddStep("expire", func(ctx context.Context, s expense) (expense, error) {
		info, _ := durable.StepInfoFrom(ctx)
		s.Outcome = "via timeout of " + info.TimedOutWaitingFor
		return s, nil
	}, durable.Terminal())
	_ = durable.OnEvent(b, "approval", func(_ context.Context, s expense, _ verdict) (expense, error) { return s, nil })
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{Policy: durable.GraphPolicy{WaitTimeout: time.Hour, WaitTimeoutNode: "expire"}})
	kit.Start("p1", expense{})
	kit.Advance(time.Hour)
	if got := kit.Final("p1"); got.Outcome != "via timeout of approval" {
		t.Fatalf("final %+v", got)
	}
	kit.Start("p2", expense{})
	kit.Send("p2", "approval", verdict{OK: true})
	if got := kit.Final("p2"); got.Outcome != "via timeout of " {
		t.Fatalf("reached by the event, the step info still says timeout: %+v", got)
	}
}
