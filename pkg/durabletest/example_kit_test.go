package durabletest_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Start drives the new run until it waits or finishes and returns its status, so a test can
// check where it stopped without polling.
func ExampleKit_Start() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})

	run := kit.Start("t1", Ticket{Subject: "refund", Approved: true}) // approved: no wait
	if run.Status != engine.StatusCompleted {
		t.Fatalf("status %s", run.Status)
	}
	run = kit.Start("t2", Ticket{Subject: "refund"})
	if ev, ok := run.WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("waiting for %q", ev)
	}
}

// Run reads a run's status at any point, for example its progress while it waits.
func ExampleKit_Run() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	kit.Start("t1", Ticket{Subject: "refund"})

	p, ok := kit.Run("t1").Progress()
	if !ok || p.CurrentNode != "triage" || p.ResumeNode != "close" {
		t.Fatalf("progress %+v", p)
	}
	kit.Send("t1", "approval", Approval{OK: true})
	if got := kit.Run("t1").Status; got != engine.StatusCompleted {
		t.Fatalf("status %s", got)
	}
}

// TestKit_StartAndRun runs the bodies of ExampleKit_Start and ExampleKit_Run with a real t,
// so the examples' claims are checked.
func TestKit_StartAndRun(t *testing.T) {
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	if run := kit.Start("t1", Ticket{Subject: "refund", Approved: true}); run.Status != engine.StatusCompleted {
		t.Fatalf("approved ticket: status %s", run.Status)
	}
	run := kit.Start("t2", Ticket{Subject: "refund"})
	if ev, ok := run.WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("waiting for %q", ev)
	}
	p, ok := kit.Run("t2").Progress()
	if !ok || p.CurrentNode != "triage" || p.ResumeNode != "close" {
		t.Fatalf("progress %+v, %v", p, ok)
	}
	kit.Send("t2", "approval", Approval{OK: true})
	if got := kit.Run("t2").Status; got != engine.StatusCompleted {
		t.Fatalf("status %s", got)
	}
}
