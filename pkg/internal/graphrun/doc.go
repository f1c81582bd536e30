// Package graphrun is the seam between the graph model (package durable) and what runs it
// (the engine, the runs API's in-process runs, the test kit): the machinery a graph author
// never calls, kept off durable's public page.
//
// It holds the context plumbing that hands a handler its step and branch (WithStepInfo,
// WithBranch) and collects what it emits (WithEmitter, Emitter), the optional capabilities
// the engine asks a graph for beyond durable.Graph (Of and the interfaces of
// capabilities.go), a fan-out's branch results and their default join (BranchResult,
// JoinBranches, StateUpdate), and the recovery of a handler panic (RecoverHandler).
//
// Package durable imports it and installs, once, at init (Install), the parts that are the
// model's: its default join, its handler errors and how to reach a GraphRegistration's
// capabilities. It is not a graph model of its own, and imports no durable type: values of
// durable's types travel through it as type parameters or as any.
package graphrun
