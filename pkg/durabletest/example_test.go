package durabletest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

type Ticket struct {
	Subject  string `json:"subject"`
	Approved bool   `json:"approved"`
	Status   string `json:"status"`
}

// Validate refuses a ticket without a subject; the engine checks a run's initial state with
// it, so such a start is refused.
func (t Ticket) Validate() error {
	if t.Subject == "" {
		return errors.New("a ticket needs a subject")
	}
	return nil
}

type Approval struct {
	OK bool `json:"ok"`
}

func ticketGraph() durable.GraphRegistration[Ticket] {
	b := durable.NewManifestBuilder[Ticket]("tickets")
	b.SetEntrypoint("triage")
	_ = b.AddStep("triage", func(_ context.Context, s Ticket) (Ticket, error) { s.Status = "triaged"; return s, nil },
		durable.WithHandlerName("tickets.triage"), durable.WithRouteName("tickets.route"),
		durable.WithDecide(func(_ context.Context, s Ticket) (durable.RouteDecision, error) {
			if !s.Approved {
				return durable.WaitForEvent("approval", "close"), nil
			}
			return durable.Next("close"), nil
		}))
	_ = b.AddStep("close", func(_ context.Context, s Ticket) (Ticket, error) { s.Status = "closed"; return s, nil },
		durable.WithHandlerName("tickets.close"), durable.Terminal())
	_ = durable.OnEvent(b, "approval", func(_ context.Context, s Ticket, a Approval) (Ticket, error) {
		s.Approved = a.OK
		return s, nil
	})
	g, _ := b.Build()
	return g
}

// TestTicket is how a test of your own graph reads: start, check the wait, send the event,
// read the typed final state. (The Example below shows the same test body.)
func TestTicket(t *testing.T) {
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	run := kit.Start("t1", Ticket{Subject: "refund"})
	if ev, _ := run.WaitingFor(); ev != "approval" {
		t.Fatalf("waiting for %q", ev)
	}
	kit.Send("t1", "approval", Approval{OK: true})
	if got := kit.Final("t1"); got.Status != "closed" || !got.Approved {
		t.Fatalf("final %+v", got)
	}
}

// TestTicket_Timeout moves the fake clock past a wait timeout.
func TestTicket_Timeout(t *testing.T) {
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{
		Policy: durable.GraphPolicy{WaitTimeout: 24 * time.Hour, WaitTimeoutNode: "close"},
	})
	kit.Start("t2", Ticket{Subject: "refund"})
	kit.Advance(24 * time.Hour)
	if got := kit.Final("t2"); got.Status != "closed" || got.Approved {
		t.Fatalf("final %+v", got)
	}
	if want := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC); !kit.Now().Equal(want) {
		t.Fatalf("clock at %v, want %v: a day past the default start", kit.Now(), want)
	}
}

// A test of your own graph: New in a TestXxx, then Start, Send, Advance and Final.
func ExampleNew() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{
		Policy: durable.GraphPolicy{WaitTimeout: time.Hour, WaitTimeoutNode: "close"},
	})
	run := kit.Start("t1", Ticket{Subject: "refund"})
	if ev, _ := run.WaitingFor(); ev != "approval" {
		t.Fatalf("waiting for %q", ev)
	}
	kit.Advance(time.Hour) // no approval within the hour: the wait times out to "close"
	if got := kit.Final("t1"); got.Status != "closed" {
		t.Fatalf("final %+v", got)
	}
}

// Transient failures are injected per node and retried under the graph's retry policy.
func ExampleOptions_faults() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second}},
		Faults: map[string]int{"triage": 1},
	})
	kit.Start("t1", Ticket{Subject: "refund", Approved: true})
	kit.Advance(time.Second)
	_ = kit.Final("t1")
}

// Advance skips time: every timer due within d fires in order, retries included, so a step
// that fails twice under a 1 s back-off that doubles completes within one Advance(3s).
func ExampleKit_Advance() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}},
		Faults: map[string]int{"triage": 2},
	})
	kit.Start("t1", Ticket{Subject: "refund", Approved: true})
	kit.Advance(3 * time.Second)
	if got := kit.Final("t1"); got.Status != "closed" {
		t.Fatalf("final %+v", got)
	}
}

// StartPending starts a run without driving it, so the next Send is an event that arrives
// before the run waits for it.
func ExampleKit_StartPending() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	kit.StartPending("t1", Ticket{Subject: "refund"})
	kit.Send("t1", "approval", Approval{OK: true}) // before the wait: kept, applied at the wait
	if got := kit.Final("t1"); !got.Approved {
		t.Fatalf("final %+v", got)
	}
}

// TestKit_AdvanceAndStartPending_Examples runs the two examples' bodies with a real t.
func TestKit_AdvanceAndStartPending_Examples(t *testing.T) {
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}},
		Faults: map[string]int{"triage": 2},
	})
	kit.Start("t1", Ticket{Subject: "refund", Approved: true})
	kit.Advance(3 * time.Second)
	if got := kit.Final("t1"); got.Status != "closed" {
		t.Fatalf("after Advance(3s): %+v", got)
	}
	kit.StartPending("t2", Ticket{Subject: "refund"})
	kit.Send("t2", "approval", Approval{OK: true})
	if got := kit.Final("t2"); !got.Approved || got.Status != "closed" {
		t.Fatalf("event before the wait: %+v", got)
	}
}
