// Package durable holds funcgraph's durable graph model and, alongside it, the engine that runs
// it as event-sourced runs.
//
// The model part is pure: no storage, no HTTP, no goroutines. A graph is described with a
// ManifestBuilder over a user state struct S, compiled by Build into a GraphRegistration[S]
// whose GraphManifest carries the topology hash of spec section 3 (byte-compatible with the
// Python original when handlers are given the original's names). A GraphRegistration is also
// a Graph, the type-erased view the engine executes one step at a time: ExecuteNode,
// ResolveRoute and ApplyEvent take and return the run state as a JSON object. A Registry keeps
// several versions of a graph by (name, hash).
//
// Handlers may run more than once for the same step (a crash between doing the work and
// recording it replays the step), so their side effects must be idempotent; StepInfoFrom gives
// them a stable idempotency key.
package durable
