// Package waitbound bounds how long an HTTP request waits for the work it started: past the
// bound the request is answered without the work's result and the work goes on, detached
// from the request. The hosting and platform routes that run a graph inline use it, so no
// response outlives the Azure front end's 230 s cut (funchost.FrontEndTimeout).
//
// Two ways to run the work: RunWork hands it to a kept worker goroutine and answers from the
// request's goroutine; RunInline runs it on the request's goroutine (no hand-off) and answers
// past the bound from the timer's goroutine with ReplyEarly, which sends a response complete
// (its length, `Connection: close`) while the handler still runs — for the writers
// CanReplyEarly accepts (the custom handler's capture of an invocation, a flushing writer).
//
// Not for: cancelling work on a deadline (the work is never cancelled by the bound), or
// waits on durable runs (those wait with a context deadline and poll storage).
package waitbound
