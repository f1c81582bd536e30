// Package inspector serves the run inspector: one browser page, GET /api/inspector, that shows
// durable runs through the runs API (pkg/runsapi) — the runs list, a run's graph drawn from its
// manifest and its history with the path it took, its history step by step with the state after
// each step, the versions of each graph with unfinished runs — and acts on them (send an event,
// cancel, rewind a failed run, purge). A run's page draws the run from its status first, then
// follows it through its feed (GET /api/runs/{instance_id}/feed, one long poll at a time, with
// its live channel: live=true), reading its status again only when the feed's history moved; it
// shows what a running run waits for (the status's sleeping_until, node_retry and
// branches_retrying) and the live output of the step in flight (web/live.js).
//
// The graph is laid out by dagre (web/dagre.min.js, vendored from npm with its license in
// web/dagre.LICENSE) and drawn by web/graph.js: top to bottom from the entrypoint, every edge
// from its source to its target, the waits, sleeps, pending retries, fan-outs and child runs
// of the run marked, each child run a link to its own page.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary (embed.FS), with no build
// step and nothing fetched but the runs API; it is served as one document, so that the function key given once (the `code` query
// parameter, or typed in the page) is the only credential: the page sends it as
// `x-functions-key` to the runs API, whose errors it shows as the API states them.
//
// It is not an API: it reads and writes nothing itself, and it holds no state on the server.
package inspector
