// Package a2aserver serves graphs as A2A v1.0 agents: per graph, an agent card and a
// JSON-RPC 2.0 endpoint whose tasks are the graph's durable runs (the task id is the run's
// instance id), so that another agent reaches a graph with any A2A v1.0 client.
//
// SendMessage starts a run from the message's parts (a data part is the start input; text
// parts fill the graph's configured text field, Options.TextFields), or, with the taskId of a
// task that is input-required (a run waiting for an event), delivers the message as the
// event the run waits for. GetTask reads the run, CancelTask cancels it, ListTasks lists the
// caller's tasks of the graph from the engine's index (its owner partition under isolation,
// never a table scan), SendStreamingMessage and SubscribeToTask stream the task's status
// updates as Server-Sent Events from the run's feed. Push notifications and the extended
// card answer the spec's errors. docs/a2a.md has the routes, the state mapping and the
// compatibility table.
//
// With Options.Hosted, each graph of a hosting app (package host) is an agent too, one
// without tasks: SendMessage runs the graph within the request through its invoke route, with
// every check of that route and the request's caller, and answers a message of the agent
// whose data part is the output; a graph with a checkpointer keeps one thread per contextId
// (hosted.go).
//
// It is not an A2A client.
package a2aserver
