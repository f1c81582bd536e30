// Package funchost speaks the Azure Functions custom-handler protocol, and nothing else.
//
// Start with NewFunctionApp. A FunctionApp is a route table: HTTP functions served by ordinary
// http.Handlers (HandleHTTP), and queue and timer functions served by plain Go functions
// (HandleQueue, HandleTimer). The same table drives three things:
//
//   - CustomHandler: the server the Functions host starts and calls. It decodes JSON
//     invocations (`POST /{FunctionName}` with Data and Metadata), rebuilds the caller's
//     *http.Request, captures the handler's response into the http output binding, and
//     answers the host with {Outputs, Logs, ReturnValue}. It also serves requests the host
//     forwards or proxies at their original path; a proxied one (HandlerOptions.Proxying)
//     streams its answer to the caller, and Proxied tells a handler so, with the deadline
//     functionTimeout sets it.
//   - Standalone: the same routes served directly under `/{routePrefix}` with the host's
//     routing and key checks (Keys, LoadKeysFile), for local development and containers.
//   - WriteFunctions: the function.json folders the host reads at startup.
//
// Every route of both handlers refuses a browser's cross-site request that may change state
// (403, CrossSiteMessage) before its handler runs, unless ServerConfig.AllowedOrigins lists
// its origin. Serve and ServeConfig run either handler with the server's timeouts and limits
// (ServerConfig) until their context ends. ReadRequestBody and WriteBodyError read a request
// body under a cap and answer its failures with the right status.
//
// Two status codes must not be confused: the reply to the host (2xx means the invocation was
// handled; anything else fails it and the host retries queue work) and the status inside the
// http output (what the caller sees). A handler's 4xx or 5xx is a handled invocation.
//
// It is not a graph host: the package knows nothing of graphs, and the hosting and durable
// packages register their functions on a FunctionApp. Nor is it a host emulator for tests
// (package funchosttest).
package funchost
