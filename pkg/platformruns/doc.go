// Package platformruns runs the platform's background runs (runs.create, get, list, join,
// cancel) on the durable engine, so they survive restarts and are shared by every instance on
// the same engine storage. It implements platform.RunBackend.
//
// Start with Register, before the engine is built (it adds the internal graph GraphName to the
// registry, and the engine needs Policy for it), then give the platform routes Backend.Bind
// of the engine as platform.Options.NewRunBackend.
//
// Each background run is a run of the one internal durable graph GraphName, filed under its
// thread in the engine's group index (engine.StartRunRequest.Group = the thread id, or a
// digest of an id the engine cannot key), so each thread's runs are one engine group. Nodes:
//
//   - wait_turn checks the run's turn: it reads the thread's unfinished runs oldest first
//     (engine.RunQuery.OldestFirst) until it meets itself or two runs ahead of it; runs in
//     their hand-off node count as done. Its turn come, the run goes to execute; else it waits
//     for the event "turn" (durable.WaitForEvent) and re-checks when it arrives. Per-thread
//     FIFO order is the engine's creation order, across instances.
//   - execute calls platform.RunExecutor.ExecuteRun and continues at the hand-off node of
//     the result. While the thread is busy with a blocking run (platform.ErrRetryLater) the
//     node is retried with the engine's back-off (Policy: 200 ms to 15 s, for about 8 hours,
//     one history row per retry, so at most 2,000 per run and 240 an hour).
//   - handoff_success, handoff_error, handoff_interrupted (terminal) wake the next run: they
//     raise "turn" on the thread's oldest unfinished run that has not executed, unless it is
//     executing already. The node's name carries the result, so a run in it reads as
//     finished (Get, List, Join) and as done to the turn checks, before the engine completes
//     it. A failed raise is retried (Policy).
//
// Cancel terminates the durable run, then wakes the next run the same way; the execute node
// watches its run and interrupts the graph.
//
// Nothing polls: a waiting run costs nothing until an event or its timer. The common path is
// durable: the hand-off is a node of the run, and an event raised before the woken run waits
// stays in its inbox (a stale or early event costs one re-check). Best effort are: the wake-up
// by Cancel (a crash or storage failure right after the termination skips it), and runs that
// end without a hand-off (a run failed by the engine: retries or MaxSteps exhausted, a poison
// work item; or terminated through the engine directly). The safety net bounds the delay
// these cause: every wait for a turn is bounded (RouteDecision.Within) and re-checks when it
// runs out, after 1 minute for the run next in line and 10 minutes for the runs behind it
// (which the next in line wakes in turn once it has executed). A re-check writes about four
// history rows, so a run queued for an hour behind a long run writes about 240 (24 behind
// the next in line); Policy.MaxSteps allows about a week of re-checks. Two runs submitted
// to one thread on two instances at the same moment may both see their turn if one's head
// is not stored yet when the other checks (the platform's thread lock still serialises
// their graph executions).
//
// Statuses: pending while the durable run is pending or in wait_turn, running in execute,
// then the executor's final status (success, error, interrupted) from the hand-off node on;
// a terminated durable run is interrupted and a failed one is error. List reads the
// thread's runs newest first from its group, at the cost of offset+limit head reads (more
// with a status filter); Active and the turn checks cost one query and a few head reads,
// whatever the number of runs other threads keep. The app purges finished runs with
// engine.Engine.PurgeRun (or the engine's retention). GraphName is internal
// (durable.Registry.RegisterInternal): the generic runs API answers 404 for it and its runs
// and leaves them out of its listings, so no client can start, signal, cancel or purge a
// background run behind the platform's checks.
//
// Assistants (NewAssistants) serves the app's durable graphs as platform assistants
// (platform.DurableAssistants): a thread's durable run is the engine instance
// InstanceID(thread id), an id the runs API reserves, and only a run started for the thread
// counts as its run; a wait_for_event is the platform's interrupt and command.resume raises
// the awaited event (docs/http-platform.md, "Durable assistants"). Assistants.RunStream
// (platform.DurableStreamer, assistants_stream.go) follows the run's feed with its live channel
// while it runs: each step's state as it commits, each chunk as it is written, each emitted
// event once (at its writer's commit record or its history row, whichever comes first).
//
// Streams (platform.RunStreams, streams.go): a background run's stream chunks are payloads of
// its durable run, "<run id>/<nonce>/stream/<n>", deleted with it; wait_turn records the run's
// nonce in its state, where a join on any instance reads it (one history page).
//
// Not for: blocking runs (runs/wait and runs/stream run in the request), the in-process
// backend (platform.LocalRuns).
package platformruns
