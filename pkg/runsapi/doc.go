// Package runsapi is the durable runs surface of a function app: the HTTP API over durable
// runs (start a graph run, read its status and history, follow its feed, raise events, cancel, list and purge
// runs, graph manifests and versions) served as funchost routes, so the same handlers work
// under the Azure Functions host and in the standalone server, and what connects it to the
// rest of the app:
//
//   - Mount puts the API on a hosting app (package host), so one function app serves both
//     kinds of graph: one graph namespace, one /api/health, the durable graphs listed in
//     /api/health/details and the run routes in its openapi.json;
//   - NewAsyncGraph runs a hosted graph as a one-node durable graph (what Mount does for
//     graphs registered with AsyncMode);
//   - NewInProcessGraph serves a durable graph through the hosting routes, run in one
//     process to completion or to its first wait;
//   - RegisterWorker adds the worker functions that deliver the engine's work items under the
//     Functions host: the fg_orchestrator queue trigger and the fg_repair timer.
//
// Every error is answered {"error": "<message>"} (with details for some), its status decided
// where the hosting and platform routes decide theirs; internal error text is never sent. It
// is not the engine (package engine) and holds no storage of its own: it talks to an
// engine.Runs. package launch wires it into an app. Its test client is package runsapitest.
package runsapi
