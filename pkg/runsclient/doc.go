// Package runsclient is a Go client for the durable runs HTTP API of a funcgraph app (package
// runsapi, docs/http-runs.md): start a run of a durable graph with a typed input, read its
// status and state, send it events, cancel, rewind, list, page through its history, purge it,
// and follow its feed with typed events and state until it ends.
//
//	c, err := runsclient.New("https://my-app.azurewebsites.net/api", runsclient.WithFunctionKey(key))
//	started, err := runsclient.Start(ctx, c, "support_agent", Ticket{UserMessage: "refund"}, nil)
//	status, err := c.WaitForCompletion(ctx, started.ID)
//
// Calls are safe for concurrent use. Every call takes a context; a cancelled context ends it,
// retries and waits included.
//
// Retries: an answer 429 or 503 (the app refused the request and wrote nothing: a busy run, a
// rolling deploy, a full response budget) is sent again after its Retry-After, at most
// Retry.MaxAttempts times in all; so is a request that failed in transport, or that a gateway
// answered 502 or 504, when sending it twice cannot do twice what it asks: reads, and events
// (each carries an Idempotency-Key, generated when the caller gives none). A start, cancel, rewind or purge whose answer was
// lost is not sent again: the error says so, and the caller decides (a start with an
// instance id can be checked with Status).
//
// Errors: an answer that is not a success is a *Error with its status, the body's "error"
// message and its other members; errors.Is matches the sentinels ErrNotFound, ErrConflict,
// ErrBadRequest, ErrUnauthorized and ErrBusy. The function key travels in the
// x-functions-key header only, never in a URL, so no error text holds it.
//
// This package is for production code; the tests of the server side use runsapitest.
package runsclient
