// Package mcpserver serves a registry's durable graphs, and a hosting app's graphs, as the
// tools of a Model Context Protocol server: streamable HTTP, stateless (any instance answers
// any request, nothing of a client is kept in process), on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Each public durable graph is a tool named after the graph, whose input schema is the JSON
// Schema of the graph's state (the start's input). A call starts a durable run
// (engine.Runs.StartRun) and waits for it up to Options.CallWait: a completed run answers its
// output as structured content ({graph_name, graph_version, graph_hash, final_node, state}),
// a failed or cancelled one a tool error, and a run still going (working, or waiting for an
// event) a result naming the run id, its status and its status URL on the runs API, where
// a client without Tasks follows it.
//
// Under per-user isolation (Options.Isolation) a run started through a tool is the caller's,
// exactly as if it had been started on the runs API: its metadata names the caller as its
// owner.
//
// With Options.Hosted, each graph of a hosting app (package host) is a tool too: a call runs it
// in process through its invoke route, with every check of that route and the caller of the
// MCP request, and answers the route's output as structured content; a graph with a
// checkpointer runs on the thread its call's _meta names (ThreadMetaKey), a new one when it
// names none (hosted.go).
//
// A client that declares the Tasks extension (ExtensionTasks) in a request's client
// capabilities gets, for a run that outlasts the call, a task whose id is the run's id:
// tasks/get reads the run (working, input_required while it waits for an event, completed
// with the tool result, failed, cancelled), tasks/update carries an accepted elicitation's
// content into the event the run waits for, tasks/cancel cancels the run (tasks.go). A task
// is its caller's run: another caller's reads as not found.
//
// A call with a progress token is answered as an event stream whose progress notifications
// carry the run's feed rows and its live channel's records while the call waits (progress.go).
//
// It is not a general MCP server: no resources, prompts, sampling or subscriptions; see
// docs/mcp.md for what answers an error.
package mcpserver
