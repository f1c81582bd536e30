// Package funchost speaks the Azure Functions custom-handler protocol, and nothing else.
//
// A FunctionApp is a route table: HTTP functions served by ordinary http.Handlers, and queue
// and timer functions served by plain Go functions. The same table drives three things:
//
//   - CustomHandler: the server the Functions host starts and calls. It decodes JSON
//     invocations (`POST /{FunctionName}` with Data and Metadata), rebuilds the caller's
//     *http.Request, captures the handler's response into the http output binding, and
//     answers the host with {Outputs, Logs, ReturnValue}. It also serves requests the host
//     forwards at their original path.
//   - Standalone: the same routes served directly under `/{routePrefix}` with the host's
//     routing and key checks, for local development and containers.
//   - WriteFunctions: the function.json folders the host reads at startup.
//
// Two status codes must not be confused: the reply to the host (2xx means the invocation was
// handled; anything else fails it and the host retries queue work) and the status inside the
// http output (what the caller sees). A handler's 4xx or 5xx is a handled invocation.
//
// The package knows nothing of graphs; the hosting and durable packages register functions
// on a FunctionApp.
package funchost
