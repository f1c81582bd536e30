// Package runsapi is the HTTP API over durable runs (seed 001): start a graph run, read its
// status and history, raise events, cancel, list and purge runs, health and an OpenAPI
// document — served as funchost routes so the same handlers work under the Azure Functions
// host and in the standalone server. Every error becomes an HTTP status in one function
// (errorResponse).
//
// It also bridges durable graphs and hosted graphs: Service.Mount adds the runs API to a
// hosting app (package host), NewAsyncGraph runs a hosted graph as a one-node durable graph,
// and NewInProcessGraph serves a durable graph through the hosting routes in one process.
//
// It is not the engine (package engine) and holds no storage of its own: it talks to an
// engine.Runs.
package runsapi
