// Package engine runs durable graphs (package durable) as event-sourced runs: every step of a
// run appends history rows and updates the run's head row in one conditional table
// transaction, so a step commits exactly once however often its work item is delivered.
//
// The engine owns the storage contracts it needs — Store (a table shaped after Azure Table
// storage), WorkQueue (at-least-once messages with a visibility timeout, shaped after Azure
// Queue storage), PayloadStore (blobs for values too large for a table property) and
// LiveStore (a run's live channel: offset-addressed logs, shaped after Azure append blobs) —
// with their errors and limits. Backends implement them: package memory (in-process twins) and the
// Azure backends. Their conformance suites are in package enginetest.
//
// An Engine starts, steps, signals, cancels, lists and purges runs (the Runs interface), feeds a
// run's history to a client that follows it (RunFeeder), and dispatches work items: either with its own workers (Start) or one delivery at a time from
// a host's queue trigger (HandleWorkItem).
//
// Every write can be recognised as the engine's own when read back: a storage error that is
// not a definite rejection — a timeout, a 5xx, and even ErrConflict or ErrNotFound, which a
// retried request can meet against its own first try — is resolved by reading the write's
// witness, never by assumption (the ambiguity rule, commit.go).
//
// It imports nothing of HTTP serving, the Functions host protocol or Azure: the runs HTTP API
// is package runsapi.
package engine

// The files, in reading order (a test holds the list to the package's files). Calls go down
// the list, but for two knots of files that call one another: a work item's files, from
// workitem.go to cancel_family.go (a step commits, then dispatches the next item; a commit
// that lost a race asks its outcome whether to rebuild on the fresh head; a branch's worker and
// a child's wait commit steps of their own; a family's cancel goes down its chain), and the
// listing's list.go, index.go, group.go and owner.go.
//
//	engine.go          Engine, New, Start, Close
//	options.go         Options and the policies of graphs
//	start.go           StartRun
//	start_receive.go   a start's own receive of a work item, for an engine a host's queue
//	                   trigger feeds (Options.ReceiveOnStart)
//	events.go          RaiseEvent
//	cancel.go          CancelRun
//	rewind.go          RewindRun: a Failed run continues from the step that failed
//	rewind_index.go    the failure index, and RewindRuns: the runs that failed in a window
//	rewind_branch.go   a rewound fan-out: its completed branches carried, its failed ones run
//	repair.go          Sweep and the due index (recovery, its bounds and its cost model)
//	fence.go           storage decides, clocks only schedule: fences (a start's claim row, an
//	                   event's If-Match merge) and the store's clock
//	poison.go          the repair pass's rescue of the poison queue
//	reconcile.go       the repair pass's walk of the active index, from a cursor in the store
//	retention.go       Retention: the finished runs Sweep purges
//	purge.go           PurgeRun, and the rows of replaced runs
//	dispatcher.go      the embedded workers: receive a work item, keep it hidden, delete it
//	                   (or move it to the poison queue past MaxDequeueCount)
//	workitem.go        one work item: HandleWorkItem, the kill limit (deaths counted on the
//	                   run), the step loop, a run parked for its graph version, dispatch of
//	                   the next item
//	workitem_codec.go  the queue message's form, written by hand and read by the one parser
//	                   (a run's item or a branch's)
//	stepctx.go         what a work item resolves once: the run's graph version and policies
//	hold.go            a step's begin and its hold: taken by a start, released or cleared by
//	                   its end, judged by the next start against its lease
//	unapplied.go       the events a run never applied, recorded when it finishes
//	step.go            one step: the user's node, route or event handler under its graph's
//	                   guards, what it loads, and the outcome it produces
//	commit.go          the step's commit: conditional, rebased past raised events; payloads
//	                   spilled and released; the ambiguity rule: a write whose outcome is
//	                   unknown is resolved by a read
//	commit_hook.go     the test kit's seam before the commit of a handler's return (a hook
//	                   in the delivery's context, pkg/internal/commithook)
//	outcome.go         step outcomes: the interface, the commit builder (buildCommit), and the
//	                   core kinds (a visit that routes next, completes or waits; an event
//	                   applied or refused; a wait timed out; a run failed)
//	staterows.go       how a graph with reducers records its state in history: what each
//	                   step changed (an update), lists as deltas
//	fold.go            FoldState: a run's states rebuilt from its history rows
//	jsonsplit.go       the members of a JSON object and the elements of a list, as written
//	nodepolicy.go      a node's policy: its timeout, retries (retryScheduled) and failure
//	                   route (failureRouted)
//	sleep.go           a run that sleeps (slept)
//	continue.go        continue-as-new: a route that ends the run's history and goes on from
//	                   the entrypoint as its next generation (continuedAsNew), older
//	                   generations' rows deleted
//	continue_read.go   GenerationHistory: the history of the generation before the current
//	branch.go          a fan-out: its decision checked (fanOut), its region of history, its
//	                   branches dispatched (fannedOut) and joined (joined)
//	branch_worker.go   one branch's work item: its handler run and its completion row
//	branch_join.go     a fan-out's join: each branch's check that all have settled, the
//	                   merge, or the failure the join takes (branchFailed)
//	branch_progress.go a branch's progress row: its attempt, back-off, hold and deaths
//	child.go           child runs: started by a decision (childStarted), resumed when they
//	                   finish (childResumed)
//	child_wait.go      the step of a run waiting for its child run: reads the child's head,
//	                   starts a missing child, rechecks, resumes or fails
//	child_links.go     a child's notice to its parent, and cancel and purge of a run's family
//	cancel_family.go   the cancel of a family in the background: a cancel's intent to cancel
//	                   its run's child (a due row), its work item, its step and its repair
//	wait.go            WaitRun
//	list.go            ListRuns: the index shards merged newest first, continuation tokens
//	index.go           the run index: its partitions (a group's included), its rows, orphan
//	                   clean-up
//	group.go           the group index: one group's runs, newest first, its unfinished ones
//	                   oldest first
//	owner.go           the owner index: the runs whose metadata names one owner, newest first
//	searchkeys.go      search keys: the runs one key value names, newest first, from its partition
//	keys.go            SharedKey: secrets every engine over one store shares, kept in the store
//	read.go            GetRun and History
//	run_activity.go    what an active run waits for: a sleep's end, a node's or a branch's
//	                   retry (GetRunDetail)
//	runstate.go        RunState: a run's current state and where it stands, from its head
//	feed.go            Feed: a run's history after a position, waiting for the run to move
//	emitted.go         the events handlers emit (durable.Emit), written with their step's commit
//	live.go            a run's live channel: what a step writes while it runs (durable.Write),
//	                   coalesced conditional appends, the records that end an attempt
//	live_read.go       the live channel read with the feed: records, waking and polling
//	version.go         a run whose graph version is not registered here: parked, not failed
//	observer.go        Observer hooks
//	head.go            the run's head row: its core fields and properties, read
//	head_props.go      how a head property is declared: its type, its flags, its field
//	head_codec.go      reading and writing the head from the tables (set, mutableProps,
//	                   changedProps, allProps, absorb)
//	head_wait.go       the head's wait for an event and its timeout
//	head_retry.go      the head's retry attempt, back-off and failure route
//	head_fanout.go     the head's open fan-out
//	head_child.go      the head's parent and child runs
//	head_hold.go       the head's hold of the current step, and its restarts
//	head_keys.go       the head's search keys
//	head_continue.go   the head's generation and where its generations' rows begin
//	head_rewind.go     the head's marks of a rewound step
//	rows.go            a run's partition: its row layout and keys, history rows, reading a
//	                   row's properties (spilled ones included)
//	run_status.go      accessors of a Run
//	runs.go            the Runs contract: Run, statuses, errors, instance ids
//	store.go           the Store contract, and its optional capabilities
//	queue.go           the WorkQueue contract
//	payloads.go        the PayloadStore contract
//	payloadkey.go      the naming rules of a payload key
//	live_store.go      the LiveStore contract: a run's live channel, an offset-addressed log
//	limits.go          the Azure Table limits every Store enforces
//	json.go            the JSON the engine writes by hand
