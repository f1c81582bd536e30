// Package hosttest emulates the Azure Functions host for tests: it reads host.json and the
// function.json folders of an app root, starts a custom handler (a real executable or an
// in-process http.Handler served over loopback HTTP), and behaves towards callers and towards
// the handler as the host does (shared/spec/functions-host.md, section 10):
//
//   - startup: free port, FUNCTIONS_CUSTOMHANDLER_PORT and friends, `GET /` every 25 ms until
//     any answer (30 s cap, failing early if the process exits), `%VAR%` expansion in
//     arguments, defaultExecutablePath and workingDirectory resolution;
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
//   - forwarding (and proxying) of http-in/http-out functions;
//   - in-memory or storage queues (base64 message encoding, double-encoded string triggers,
//     retries and `<queue>-poison` after maxDequeueCount) and on-demand timer ticks;
//   - functionTimeout, enforced by killing and restarting the handler.
//
// Queue triggers on storage: when Options.Env holds a queue trigger's connection setting
// ("AzureWebJobs<connection>" or "<connection>", default AzureWebJobsStorage; a connection
// string, UseDevelopmentStorage=true included), a listener polls that real queue with azqueue
// as the host's QueueListener does: batches of extensions.queues batchSize (16), a new batch
// once at most newBatchThreshold are running, messages hidden for 10 minutes
// (Options.ListenerVisibility) and renewed every half of that while the invocation runs,
// back-off up to maxPollingInterval (1 min); delete on success, release after
// visibilityTimeout (0) on failure, `<queue>-poison` on the maxDequeueCount-th (5) failure or
// when dequeued more often than that. Queue outputs with a configured connection go to
// storage too; everything else uses the in-memory queues (DrainQueues). Queue Metadata is sent
// as the host sends it: string values double-encoded, DequeueCount a string.
//
// functionTimeout (host.json, 30 min when unset, "-1" none; Options.FunctionTimeout for
// tests): an invocation of any kind that exceeds it fails (HTTP callers get 500 with an empty
// body, a queue message is released for a retry); if it is still running TimeoutGracePeriod
// (2 s) later, the handler process is killed with SIGKILL and restarted on a new port, failing
// every invocation in flight (Restarts counts it). An in-process Handler has its server and
// connections closed instead; its goroutines cannot be killed.
//
// Transports serves a funchost.FunctionApp behind both the standalone server and the emulator
// so one table of HTTP cases can run through both.
//
// Not emulated: the Azure load balancer's 230 s cut-off (callers get 502 while the function
// keeps running), the proxying mode's header rewriting details, EasyAuth, non-queue output
// bindings, scheduled (NCRONTAB) timer ticks and runOnStartup, and the secrets store (keys come
// from Options.Keys). The 100 MB body limit (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT) and the 4 KB URL
// limit are enforced (413/414). This package is for tests, not production.
package hosttest
