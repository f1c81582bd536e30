// Package queuestore is the engine's WorkQueue on Azure Queue storage.
//
// Message bodies are sent as base64 text, the encoding the Azure Functions queue trigger
// expects by default, so the same queue can drive a queueTrigger function and standalone
// workers. Messages never expire (time-to-live -1): a work item must not vanish after the
// default seven days. Extend keeps a received message hidden while a step runs (Update
// Message), returning the new pop receipt.
//
// The Azure SDK retries a request whose reply was lost or that met a 500 or 503. For Enqueue
// that may queue the message twice, which the engine's at-least-once work items absorb (a
// duplicate is dropped as stale, or settled by the run's conditional commit); a Delete whose
// first try landed makes its retry answer 404, reported as engine.ErrNotFound, which the
// engine takes as done. An Extend whose first try landed meets a stale pop receipt on its
// retry (404, engine.ErrNotFound) and cannot learn the new one (no read returns a hidden
// message's receipt): the message then comes back after its visibility timeout, as if its
// worker had died, and the engine's redelivery handling settles it.
//
// Azure counts visibility timeouts and delays in whole seconds: they are rounded up, and
// capped at seven days (a longer delay delivers the message early; consumers are
// at-least-once anyway). Receive hides messages for at least one second.
//
// The poison queue: the Functions host moves a message that failed maxDequeueCount times to
// "<queue>-poison"; a Queue from Open has it (engine.PoisonQueuer, created if missing), so
// the engine's repair pass can put back what still needs to run and the embedded dispatcher
// can move messages there itself.
//
// Not for: creating queues (azure.Clients.EnsureQueue, which Open calls).
package queuestore
