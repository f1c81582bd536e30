// Package funchosttest emulates the Azure Functions host for tests: it runs a folder exactly as
// `func start` and the host run it (the app root is the folder; Options.AppRoot is all it is
// given), starts its custom handler (host.json's executable, or an in-process http.Handler
// served over loopback HTTP for HTTP contract tests), and behaves towards callers and towards
// the handler as the host does:
//
//   - the folder: host.json; local.settings.json as Core Tools reads it (IsEncrypted taken
//     as true when missing, so values without `"IsEncrypted": false` cannot be read);
//     function.json only in direct subfolders; the app settings are the environment (the
//     process's, with Options.Env over it) plus every local.settings.json Value the
//     environment does not set to a non-empty value, and they are the handler's environment;
//     ReadFolder reads a folder the same way without starting anything;
//   - indexing: `%NAME%` in queue names, queue connections and timer schedules resolved from
//     the app settings (names case-insensitive); an unresolved name, a `%` without its pair
//     or an invalid queue name fails that function's indexing while the others run, as in
//     the host;
//   - startup: free port, FUNCTIONS_CUSTOMHANDLER_PORT and friends, `GET /` every 25 ms until
//     any answer (30 s cap, failing early if the process exits), `%VAR%` expansion in
//     arguments and defaultExecutablePath, which is app-root-relative if that file exists and
//     otherwise looked up on PATH; a relative workingDirectory is joined to the app root;
//   - routing: functions sorted by name (ordinal, case-insensitive), the first matching route
//     wins, a method mismatch falls through, no match is 404; reserved `admin`/`runtime`
//     routes and the later of two identical routes fail to load while the others keep working;
//   - keys: AuthEnforced (Azure: 401 with an empty body) or AuthBypass (`func start`), checked
//     before the disabled-function check; an empty x-functions-key means no key;
//   - JSON invocations built like the host's (Data/Metadata, Query object, Headers arrays,
//     Params with null for unmatched optionals, Body absent without Content-Length, the three
//     host headers; Metadata and Identities shaped as the host sends them) and results read
//     like the host (non-2xx, unreadable or not application/json / text/json → 500; the http
//     output looked up case-sensitively, statusCode only, null → 500, missing → 200 `{}`;
//     string bodies through a string formatter, object bodies as indented JSON without
//     Content-Type; the base64-decode quirk of non-http outputs, white space ignored);
//   - the caller's disconnect does not cancel an invocation; `"methods": []` matches nothing;
//   - forwarding of http-in/http-out functions (the answer handed over whole, once the
//     handler is done) and proxying (enableProxyingHttpRequest, which wins over forwarding):
//     the caller's own request at its original path, Host replaced by the handler's address
//     and passed on as X-Forwarded-Host with X-Forwarded-For and -Proto, hop-by-hop headers
//     dropped, the invocation headers overwritten and x-ms-invocation-id added, the body
//     even when chunked; the answer streamed as written, the request ending with its caller,
//     and functionTimeout bounding the invocation until the whole answer is sent. Both flags
//     bind as the host binds a bool (JSON true/false or a "true"/"false" string; anything
//     else fails the start);
//   - in-memory or storage queues (base64 message encoding, double-encoded string triggers,
//     retries and `<queue>-poison` after maxDequeueCount) and on-demand timer ticks;
//   - functionTimeout, enforced by killing and restarting the handler.
//
// Queue triggers on storage: when Options.Env or local.settings.json holds a queue trigger's
// connection setting ("AzureWebJobs<connection>" or "<connection>", default
// AzureWebJobsStorage; a connection string, UseDevelopmentStorage=true included; the process
// environment does not count here), a listener polls that real queue with azqueue
// as the host's QueueListener does: batches of extensions.queues batchSize (16), a new batch
// once at most newBatchThreshold are running, messages hidden for 10 minutes
// (Options.ListenerVisibility) and renewed every half of that while the invocation runs,
// back-off up to maxPollingInterval (1 min); delete on success, release after
// visibilityTimeout (0) on failure, `<queue>-poison` on the maxDequeueCount-th (5) failure or
// when dequeued more often than that. Queue outputs with a configured connection go to
// storage too; everything else uses the in-memory queues (DrainQueues), which also hide a
// failed message for visibilityTimeout. Where the host would refuse to index a queue trigger
// without a storage connection, the in-memory queues are a convenience for tests. Queue
// Metadata is sent as the host sends it: string values double-encoded, DequeueCount a string.
//
// functionTimeout (host.json, 30 min when unset, "-1" none; Options.FunctionTimeout for
// tests): an invocation of any kind that exceeds it fails (HTTP callers get 500 with an empty
// body, a queue message is released for a retry); if it is still running 2 s later (the
// host's grace period), the handler process is killed with SIGKILL and restarted on a new port, failing
// every invocation in flight (Restarts counts it). An in-process Handler has its server and
// connections closed instead; its goroutines cannot be killed.
//
// Transports serves a funchost.FunctionApp behind both the standalone server and the emulator
// so one table of HTTP cases can run through both (TransportsConfig with the server settings
// the binary would read); it and StartApp write a temporary folder and serve the app
// in-process, on a funchost.Server as the binary does. What a user deploys is tested through its staged folder
// (Start with AppRoot, no Handler): the folder is the truth for deploy tests.
//
// Not emulated: the Azure load balancer's 230 s cut-off (callers get 502 while the function
// keeps running), the host proxy's 240 s idle timeout, configurationProfile, EasyAuth, non-queue output
// bindings, scheduled (NCRONTAB) timer ticks and runOnStartup, the secrets store (keys come
// from Options.Keys), host.json's workerDirectory, Core Tools' check that AzureWebJobsStorage
// is set for non-HTTP triggers, and the settings Core Tools adds (AzureWebJobsScriptRoot,
// WEBSITE_HOSTNAME, AZURE_FUNCTIONS_ENVIRONMENT). The 100 MB body limit (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT) and the 4 KB URL
// limit are enforced (413/414). This package is for tests, not production.
package funchosttest
