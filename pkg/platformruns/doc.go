// Package platformruns runs the platform's background runs (runs.create, get, list, join,
// cancel) on the durable engine, so they survive restarts and are shared by every instance on
// the same engine storage. It implements platform.RunBackend.
//
// Each background run is a run of the one internal durable graph GraphName with two nodes:
// wait_turn, which fails (and is retried with the engine's back-off, Policy) while an
// earlier unfinished run of the same thread exists, giving per-thread FIFO order across
// instances; and execute, which calls platform.RunExecutor.ExecuteRun and is retried the
// same way while the thread is busy with a blocking run (platform.ErrRetryLater). Cancel
// terminates the durable run; the execute node watches its run and interrupts the graph.
//
// Statuses: pending while the durable run is pending or in wait_turn, running in execute,
// then the executor's final status (success, error, interrupted); a terminated durable run
// is interrupted and a failed one (retries exhausted) is error. Runs are found by listing
// the engine's runs of GraphName, so list and the FIFO check cost one scan of the platform
// runs kept; the app purges finished ones with engine.Engine.PurgeRun. GraphName is internal
// (durable.Registry.RegisterInternal): the generic runs API answers 404 for it and its runs
// and leaves them out of its listings, so no client can start, signal, cancel or purge a
// background run behind the platform's checks.
//
// Assistants (NewAssistants) serves the app's durable graphs as platform assistants
// (platform.DurableAssistants): a thread's durable run is the engine instance
// InstanceID(thread id); a wait_for_event is the platform's interrupt and command.resume raises
// the awaited event (docs/http-platform.md, "Durable assistants").
//
// Not for: blocking runs (runs/wait and runs/stream run in the request), the in-process
// backend (platform.LocalRuns).
package platformruns
