// Package launch is the entrypoint of a funcgraph binary: a user's main calls Main with a
// function that builds their app, and gets everything a Functions custom handler and a
// standalone server need.
//
//   - Under the Azure Functions host (FUNCTIONS_CUSTOMHANDLER_PORT set) it serves the custom
//     handler protocol on 127.0.0.1:<port>.
//   - `<binary> serve [--addr 127.0.0.1:7071]` serves the routes directly with host-style key
//     checks (keys from FUNCGRAPH_FUNCTION_KEY, FUNCGRAPH_MASTER_KEY, FUNCGRAPH_KEYS_FILE).
//   - `<binary> stage [--target local|publish] [--out dir] [--exe name] [--binary path] [--proxying=false]`
//     writes the whole folder the host runs, for this app: one folder per function at its
//     root, the built-in host.json naming the executable, and local.settings.json
//     (FUNCTIONS_WORKER_RUNTIME=custom, FUNCGRAPH_WORK_QUEUE and FUNCGRAPH_STORAGE_PREFIX;
//     settings the user added to the staged file are kept). The local target (`func start`,
//     default folder local/) copies this executable in and starts from the local.settings.json
//     of the working directory when there is one, the app root's development settings: its
//     values win over the staged file's, the app's own over both, and AzureWebJobsStorage
//     defaults to UseDevelopmentStorage=true. The publish target (`func azure functionapp
//     publish`, default dist/) wants a linux/amd64 build already there (or --binary) and
//     never reads that file. No file of this repository is needed. The host.json proxies HTTP
//     requests (enableProxyingHttpRequest, so the runs feed's event stream is live under the
//     host) unless --proxying=false or per-user isolation is on; under the host the handler
//     reads that setting and functionTimeout from the host.json in its working directory.
//   - `<binary> functions [--out functions]` writes only the function.json folders.
//   - `<binary> hostjson [--out host.json] [--exe name] [--proxying=false]` writes only the
//     built-in host.json.
//   - `<binary> --version` prints Version, the Go version, and the binary's module and VCS
//     revision, reading no setting.
//
// The generated queue trigger reads its queue name from FUNCGRAPH_WORK_QUEUE (a %NAME%
// binding expression the host resolves from the app settings). The app refuses to start when
// that setting names another queue than the one FUNCGRAPH_STORAGE_PREFIX gives the engine
// (under the host also when it is missing), naming both settings, rather than leave every run
// Pending; the same holds for any other name function.json reads from a setting.
//
// Run and FromEnv are the only readers of the environment: log level (FUNCGRAPH_LOG_LEVEL),
// storage (AzureWebJobsStorage or its identity-based variants, FUNCGRAPH_STORAGE_PREFIX), the
// engine's FUNCGRAPH_VISIBILITY_TIMEOUT, FUNCGRAPH_RETENTION and FUNCGRAPH_MEMORY_MAX_RUNS,
// the embedded default's memory budget (FUNCGRAPH_MEMORY_BUDGET,
// FUNCGRAPH_MEMORY_BUDGET_PER_IDENTITY: Settings.MemoryBudget), the response budget every
// surface shares (FUNCGRAPH_RESPONSE_BUDGET, FUNCGRAPH_RESPONSE_BUDGET_PER_IDENTITY,
// FUNCGRAPH_RESPONSE_MAX_BYTES, FUNCGRAPH_MAX_STREAMS, FUNCGRAPH_MAX_STREAMS_PER_IDENTITY:
// Settings.ResponseBudget), the routes' wait bound (FUNCGRAPH_MAX_WAIT), the thread lock backend (GRAPH_LOCK_BACKEND,
// FUNCGRAPH_LOCK_CONTAINER), per-user isolation (FUNCGRAPH_USER_ISOLATION,
// FUNCGRAPH_IDENTITY_HEADER, FUNCGRAPH_TRUSTED_PROXIES: off by default, checked at startup),
// the server's timeouts and limits (FUNCGRAPH_READ_HEADER_TIMEOUT, FUNCGRAPH_BODY_READ_TIMEOUT,
// FUNCGRAPH_IDLE_TIMEOUT, FUNCGRAPH_DRAIN_TIMEOUT, FUNCGRAPH_SHUTDOWN_TIMEOUT,
// FUNCGRAPH_MAX_HEADER_BYTES, FUNCGRAPH_DRAIN_BODY_BYTES, FUNCTIONS_REQUEST_BODY_SIZE_LIMIT,
// and under `serve` FUNCGRAPH_MAX_CONNECTIONS),
// the keys, and FUNCGRAPH_TRACE_EXPORTER for the app to interpret. With storage configured it
// opens every Azure store from one set of clients (package azure) and hands them to the app
// in Settings: the engine's (Durable), the platform threads (Threads), a checkpointer
// (Checkpoints) and the distributed lock (ThreadLock). It stops on SIGTERM or interrupt: the
// server drains, then the app's Close runs.
//
// Assemble is the one place that puts an app together on those stores: hosted graphs, durable
// graphs (engine, runs API, worker functions) and the LangGraph-Platform routes with their
// background runs, returning the engine so the app can start runs from routes of its own.
// What routes and graphs exist stays the Builder's choice; it may also compose the host,
// durable and runsapi packages itself (HostApp and MountDurable are the parts).
package launch
