// Package runsapi is the HTTP API over durable runs (seed 001): start a graph run, read its
// status and history, raise events, cancel, list and purge runs, health and an OpenAPI
// document — served as funchost routes so the same handlers work under the Azure Functions
// host and in the standalone server. Every error becomes an HTTP status in one function
// (errorResponse).
//
// It is the API only: mounting it on a hosting app, the bridges between hosted and durable
// graphs and the worker functions of the Functions host are in package durablehost. It is not
// the engine (package engine) and holds no storage of its own: it talks to an engine.Runs.
package runsapi
