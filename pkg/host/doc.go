// Package host hosts agent graphs as HTTP functions on the Azure Functions custom-handler
// protocol: synchronous invoke, buffered server-sent-event streams, thread state, health and an
// OpenAPI document, with per-thread locks, request limits and run observer hooks.
//
// A GraphHostApp is built with New and filled with Register; FunctionApp returns the
// funchost.FunctionApp that serves the routes (as a custom handler under the Functions host, or
// standalone) and generates the function.json folders:
//
//	GET  /api/health                                   fg_health           liveness, {"status":"ok"}
//	GET  /api/health/details                           fg_health_details   registered graphs
//	GET  /api/openapi.json                             fg_openapi          OpenAPI 3 document
//	POST /api/graphs/<name>/invoke                     fg_<name>_invoke
//	POST /api/graphs/<name>/stream                     fg_<name>_stream    when RegisterOptions.Stream
//	GET  /api/graphs/<name>/threads/{thread_id}/state  fg_<name>_state     for a StatefulGraph
//
// Graphs are plain Go values implementing InvocableGraph and, optionally, StreamableGraph,
// StatefulGraph, Checkpointed and VersionedGraph. The HTTP contract (messages, status codes,
// the order of checks, SSE framing and limits) is in docs/http-hosting.md.
//
// Every answer counts in the app's response budget while it is sent, against the caller's
// identity and the total (Options.ResponseBudget, respond.go): past a bound a request is
// refused 429 before its state is read or its graph runs, and a stream is one of the caller's
// open event streams.
//
// Streams are buffered: the graph runs to completion and the whole SSE body is returned in one
// response, because the custom-handler JSON protocol cannot stream. Auth levels are enforced by
// the Functions host (function.json authLevel), not by this package.
//
// This package does not provide the LangGraph-Platform-compatible routes nor durable runs; the
// durable engine attaches to a GraphHostApp through ReserveGraphName, AddHealthDetails,
// AddOpenAPI and FunctionApp.
package host
