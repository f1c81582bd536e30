// Package durable is funcgraph's durable graph model: what a graph author imports to describe a
// graph that runs durably, step by step, with route decisions and waits for external events.
//
// It is pure: no storage, no HTTP, no goroutines. It is not the engine that runs graphs
// (package engine, with its storage contracts), nor the HTTP API over runs (package runsapi),
// nor a storage backend (packages memory and the Azure backends).
//
// Start with NewManifestBuilder: a graph is described with a ManifestBuilder over a user state
// struct S, one typed step per node (AddStep, a StepFunc that receives the state and returns
// the new state), its successor (WithNext, Terminal) or its route (WithDecide, a DecideFunc
// returning a RouteDecision such as Next, Complete, WaitForEvent, Parallel, Map, Sleep or
// StartChild), and one typed handler per event (OnEvent, whose payload is decoded into a type
// of the author's). Build compiles it into a GraphRegistration[S] whose GraphManifest carries
// the topology hash (byte-compatible with the Python package's when handlers are given their
// Python names with WithHandlerName and WithRouteName, see docs/lineage.md; otherwise names
// default to the node's, "node:<name>" and "route:<name>", see names.go). Per-node policies
// (WithRetry, WithTimeout, WithFailureRoute, NonRetryable) say how a node's failures are handled, and the
// graph's own guards (WithPolicy: retries, wait timeouts, a step limit) how its runs are
// bounded. A GraphRegistration is also a Graph, the type-erased view the engine executes one
// step at a time: ExecuteNode, ResolveRoute and ApplyEvent take and return the run state as a
// JSON object. A Registry (NewRegistry) keeps several versions of a graph by (name, hash).
// Package durabletest runs a graph in a test, on the real engine, in memory.
//
// # State model
//
// S must be a named struct. Its exported fields are the state, named by their json tag (no
// tag options such as omitempty; every field is always dumped, in declaration order). Embedded
// fields are not supported. Incoming state is validated per step:
//   - unknown top-level keys are dropped;
//   - a field tagged `durable:"required"` must be present; other missing fields keep their
//     defaults: the Go zero value, empty (not null) for slices and maps, or whatever
//     SetDefaults sets when *S implements Defaulter;
//   - JSON null is accepted only by pointer and interface fields (use *string for "string or
//     null");
//   - type errors fail the step with a *StateError, except that top-level integer fields
//     (and pointers to them) accept a string holding an integer or an integral number
//     ("2" and 2.0 become 2; parity: docs/lineage.md);
//   - Validate is called when S or *S implements Validator.
//
// # Handlers
//
// Handlers receive a context and a copy of the state. They may run more than once for the same
// step (a crash between doing the work and recording it replays the step), so their side
// effects must be idempotent; StepInfoFrom gives them a stable idempotency key. A handler panic
// is returned as a *HandlerError rather than crashing the engine. Emit reports a handler's
// progress to whoever follows the run: its events are stored with the step, once. Write sends
// chunks while the step runs (not history: they reach the run's live channel at once), and
// WriteMessageChunk the pieces of a chat message, which the platform routes serve as
// LangGraph's message chunks.
//
// # The map-of-updates form
//
// A graph written for a runtime whose handlers return a dict of the fields they change (the
// Python durable package of docs/lineage.md, LangGraph's partial updates) can be ported
// handler for handler: AddNode
// takes a NodeFunc that returns an Update (a map of JSON field names to new values) or nil for
// no change, WithRoute a RouteFunc that may also return a node name as a string, and
// AddEventHandler an EventFunc that reads the raw JSON payload. Updates are validated like
// any state: a key that names no field fails the step. The two forms mix in one graph and hash
// alike under the same names; a new graph uses the typed form. The map form is gathered in
// update.go.
package durable
