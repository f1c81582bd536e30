// Package queuestore is the engine's WorkQueue on Azure Queue storage.
//
// Message bodies are sent as base64 text, the encoding the Azure Functions queue trigger
// expects by default, so the same queue can drive a queueTrigger function and standalone
// workers. Messages never expire (time-to-live -1): a work item must not vanish after the
// default seven days. Extend keeps a received message hidden while a step runs (Update
// Message), returning the new pop receipt.
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
