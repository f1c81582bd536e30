// Package azsdk is what every Azure Storage backend of funcgraph shares about the Azure SDK:
// what a service's answer means (Classify: not found, already exists, precondition failed,
// too large, throttled, …, from the table, blob and queue error codes and the HTTP status),
// how an SDK error is reported without secrets (Reduce and Summary keep the status and code,
// never the request URL, which may carry a SAS token, nor the service's message), the one
// creation of a blob container.
//
// It is not a backend and knows no contract: each backend maps a Kind to its own contract's
// sentinels (engine.ErrConflict, checkpoint.ErrNotFound, threads.ErrThreadExists, …). It is
// internal to pkg/azure; code outside pkg/azure uses the clients and stores built there.
package azsdk
