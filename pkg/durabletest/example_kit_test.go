package durabletest_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// Start drives the new run until it waits or finishes and returns its status, so a test can
// check where it stopped without polling.
func ExampleKit_Start() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})

	run := kit.Start("t1", Ticket{Subject: "refund", Approved: true}) // approved: no wait
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
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
	if got := kit.Run("t1").RuntimeStatus; got != durabletest.StatusCompleted {
		t.Fatalf("status %s", got)
	}
}

// TestKit_StartAndRun runs the bodies of ExampleKit_Start and ExampleKit_Run with a real t,
// so the examples' claims are checked.
func TestKit_StartAndRun(t *testing.T) {
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	if run := kit.Start("t1", Ticket{Subject: "refund", Approved: true}); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("approved ticket: status %s", run.RuntimeStatus)
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
	if got := kit.Run("t2").RuntimeStatus; got != durabletest.StatusCompleted {
		t.Fatalf("status %s", got)
	}
}

// TryStart returns a start the engine refuses, so a test asserts the refusal and goes on.
func ExampleKit_TryStart() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})

	_, err := kit.TryStart("t1", Ticket{}) // no subject: Ticket.Validate refuses it
	if !errors.Is(err, durable.ErrInvalidState) {
		t.Fatalf("a ticket without a subject: %v, want an invalid initial state", err)
	}
	kit.Start("t1", Ticket{Subject: "refund"}) // the refused start left nothing behind
}

// fatalRecorder is a testing.TB whose Fatal and Error calls are recorded rather than failing
// the test: Fatalf ends the goroutine it runs on, as testing.T's does.
type fatalRecorder struct {
	testing.TB
	failures []string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *fatalRecorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// on runs fn with r on a goroutine of its own, so a Fatalf ends fn only.
func (r *fatalRecorder) on(fn func()) {
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	<-done
}

// TestKit_TryStart_RefusedStartDoesNotFailTheTest: every way the engine refuses a start comes
// back from TryStart or TryStartJSON as its error, without a failure of the test, and leaves
// no run behind; an accepted start is driven as by Start.
func TestKit_TryStart_RefusedStartDoesNotFailTheTest(t *testing.T) {
	tb := &fatalRecorder{TB: t}
	kit := durabletest.New(tb, ticketGraph(), durabletest.Options{})
	kit.Start("waiting", Ticket{Subject: "refund"})
	var exists *durabletest.RunExistsError
	var invalid *durable.StateErrors
	tests := []struct {
		name  string
		start func() (durabletest.Run, error)
		want  func(error) bool
	}{
		{"Validate refuses the typed state", func() (durabletest.Run, error) { return kit.TryStart("r1", Ticket{}) },
			func(err error) bool { return errors.Is(err, durable.ErrInvalidState) }},
		{"a field of the wrong type", func() (durabletest.Run, error) { return kit.TryStartJSON("r2", `{"subject": 42}`) },
			func(err error) bool { return errors.As(err, &invalid) && invalid.Issues[0].Field == "subject" }},
		{"not an object", func() (durabletest.Run, error) { return kit.TryStartJSON("r3", `[1]`) },
			func(err error) bool { return errors.Is(err, durabletest.ErrInvalidRunInput) }},
		{"an invalid instance id", func() (durabletest.Run, error) { return kit.TryStart("a/b", Ticket{Subject: "refund"}) },
			func(err error) bool { return errors.Is(err, durabletest.ErrInvalidInstanceID) }},
		{"an unfinished run with that id", func() (durabletest.Run, error) { return kit.TryStart("waiting", Ticket{Subject: "again"}) },
			func(err error) bool { return errors.As(err, &exists) }},
	}
	for _, tt := range tests {
		var run durabletest.Run
		var err error
		tb.on(func() { run, err = tt.start() })
		if len(tb.failures) > 0 {
			t.Fatalf("%s: the kit failed the test: %q", tt.name, tb.failures)
		}
		if !tt.want(err) || run.InstanceID != "" {
			t.Errorf("%s: run %q, err %v", tt.name, run.InstanceID, err)
		}
	}
	if _, err := kit.Engine().GetRun(t.Context(), "r1"); !errors.Is(err, durabletest.ErrRunNotFound) {
		t.Errorf("a refused start left run r1 behind: %v", err)
	}
	if run := kit.Run("waiting"); run.RuntimeStatus != durabletest.StatusRunning {
		t.Errorf("the refused restart changed the waiting run: %s", run.RuntimeStatus)
	}
	run, err := kit.TryStart("r1", Ticket{Subject: "refund", Approved: true})
	if err != nil || run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("an accepted TryStart: %s, %v; want it driven to Completed", run.RuntimeStatus, err)
	}
}

// TestKit_Start_RefusedStartFailsTheTest: Start still fails the test on a refusal, naming the
// run and the engine's reason.
func TestKit_Start_RefusedStartFailsTheTest(t *testing.T) {
	tb := &fatalRecorder{TB: t}
	kit := durabletest.New(tb, ticketGraph(), durabletest.Options{})
	tb.on(func() { kit.Start("r1", Ticket{}) })
	if len(tb.failures) != 1 || !strings.Contains(tb.failures[0], "start r1: validate state Ticket") {
		t.Fatalf("failures %q, want one naming the run and the invalid state", tb.failures)
	}
}
