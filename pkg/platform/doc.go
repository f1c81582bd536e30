// Package platform serves the LangGraph-Platform-compatible API on a hosting app: assistants
// (one per registered graph), threads with state and history, blocking and buffered-stream
// runs on a thread or without one, and background runs (runs.create, get, list, join,
// joinStream, cancel). The official LangGraph SDKs talk to it without code changes for the methods listed
// in the compatibility table of docs/platform-compat.md.
//
// Mount attaches the routes to a host.GraphHostApp built with Options.PlatformCompat. Thread
// records live in a threads.Store (in memory by default; Azure Table storage in package
// pkg/azure/tablethreads); checkpoints live in each graph's own checkpointer, reached through the
// optional capabilities in graph.go. Background runs go through a RunBackend; LocalRuns is
// the in-process one. A background run's stream is kept with event ids (runlog.go), through the
// backend's optional RunStreams, so that a client joins it later from where it left off
// (joinstream.go). Durable graphs are assistants too (Options.Durable, durable.go); when the
// DurableAssistants are a DurableStreamer, their streams follow the run while it runs: states as
// steps commit, message and custom chunks as steps write them (durable_stream.go).
//
// Every answer counts in the hosting app's response budget while it is sent (shared with the
// hosting routes and the runs API; respond.go): read routes are refused 429 past the caller's
// or the total bound before they load anything, streams are bounded per identity and in total,
// and a history page is written state by state.
//
// The HTTP contract (routes, messages, status codes, the order of checks, SSE framing) is in
// docs/http-platform.md. Not for: the native invoke/stream/state routes (package
// host) or durable runs (the durable engine).
package platform
