// Package exampleapp builds funcgraph's example function app: the graphs and routes that
// `make run` serves and that the committed functions/ folder describes — the echo_agent graph
// hosted with its checkpointer, the LangGraph-Platform-compatible routes, and the durable runs
// API over the five example durable graphs of package examples.
//
// Start with Launch, the whole of the example binary's main (launch.Main(exampleapp.Launch)),
// or Build with a Config to assemble the app in a test. Build only assembles: nothing runs
// until the app is started.
//
// It is an example, not a library: an app of your own builds its routes with package launch
// (or host, runsapi and platform directly) the way this package does.
package exampleapp
