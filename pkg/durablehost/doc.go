// Package durablehost connects the durable engine to graph hosting and to the Functions
// host:
//
//   - Mount puts the runs API (package runsapi) on a hosting app (package host), so one
//     function app serves both kinds of graph: one graph namespace, one /api/health, the
//     durable graphs listed in /api/health/details and the run routes in its openapi.json;
//   - NewAsyncGraph runs a hosted graph as a one-node durable graph (what Mount does for
//     graphs registered with AsyncMode);
//   - NewInProcessGraph serves a durable graph through the hosting routes, run in one
//     process to completion or to its first wait;
//   - RegisterWorker adds the worker functions that deliver the engine's work items under the
//     Functions host: the fg_orchestrator queue trigger and the fg_repair timer.
//
// It is not the runs HTTP API (package runsapi: routes, decoding, errors, OpenAPI) and not the
// engine (package engine); it holds no storage of its own. package launch wires all of them
// into an app.
package durablehost
