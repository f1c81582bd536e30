// Package a2aserver serves durable graphs as A2A v1.0 agents: per graph, an agent card and a
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
// It is not an A2A client, and it does not serve hosted (non-durable) graphs.
package a2aserver
