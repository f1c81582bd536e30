// Package durabletest is a test kit for durable graphs: import it in your own tests to run a
// graph on the real engine, in memory, deterministically. A Kit starts runs, drives them until
// they wait or finish by handing each queued work item to the engine itself (no dispatcher
// goroutines, no sleeps, no polling), sends events, advances a fake clock for wait timeouts
// and retry back-offs, injects transient node failures, rewinds a failed run (Rewind), and
// reads the typed final state, the current state of a live run and where it stands (State,
// RunState), and the history.
//
//	kit := durabletest.New(t, myGraph, durabletest.Options{})
//	kit.Start("r1", MyState{Subject: "refund"})
//	if ev, _ := kit.Run("r1").WaitingFor(); ev != "approval" { t.Fatal(ev) }
//	kit.Send("r1", "approval", Approval{OK: true})
//	final := kit.Final("r1")
//
// Its methods fail the test on what a test does not expect; a start the test expects the
// engine to refuse (an invalid initial state, the id of a run not yet finished) is asserted
// with TryStart, which returns the refusal:
//
//	if _, err := kit.TryStart("r2", MyState{}); !errors.Is(err, durable.ErrInvalidState) { t.Fatal(err) }
//
// What a test reads of a run is named here too (run.go): the Run, its RunState, its statuses
// (StatusCompleted, ...), the kinds of history rows (HistoryNodeCompleted, ...) and the refusals of a start, so a
// graph's tests import durable and durabletest only. RecordEmits collects what a handler emits
// (durable.Emit) in a unit test of the handler alone.
//
// Besides a handler's failures (Options.Faults), the kit kills workers (kill.go):
// CrashAfterHandler kills the worker after a node's handler returned and before its commit,
// DuplicateDelivery and ConcurrentDelivery deliver its work item twice, LoseReply loses the
// reply of a commit that landed, Restart starts a new engine on the same storage. A worker that
// dies writes nothing more, and the items it held come back after their visibility timeout, to
// which Drive moves the fake clock:
//
//	kit.CrashAfterHandler("charge", 1)
//	kit.Start("o1", Order{})  // charge's handler runs twice, with one idempotency key
//	kit.Visits("o1")          // [charge ship]: the step committed once
//
// It is for tests, not for running graphs in production (use engine.Engine with a real
// backend); it is not a storage conformance suite (see pkg/engine/enginetest).
package durabletest
