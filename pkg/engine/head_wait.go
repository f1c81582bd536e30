package engine

// Properties of a run's wait for an event (head.headWait).
const (
	pWaiting, pResume, pWaitDeadline      = "Waiting", "Resume", "WaitDeadline"
	pWaitTimeout, pTimeoutNode, pTimedOut = "WaitTimeout", "TimeoutNode", "TimedOut"
)

// headWait is the part of the head that a wait for an event keeps: the awaited name and the
// node to resume at, and the wait's timeout.
type headWait struct {
	waiting, resume string
	waitDeadline    int64  // unix nanos, 0: none
	waitTimeout     int64  // the wait's timeout in nanoseconds, 0: none
	timeoutNode     string // where the wait continues when it times out; "": the policy's
	timedOut        string // the event whose wait timed out and led to node; "" otherwise
}

// headWaitProps declares the properties of headWait: every step rewrites them.
var headWaitProps = []headProp{
	strProp(pWaiting, propStep, func(h *head) *string { return &h.waiting }),
	strProp(pResume, propStep, func(h *head) *string { return &h.resume }),
	intProp(pWaitDeadline, propStep, func(h *head) *int64 { return &h.waitDeadline }),
	intProp(pWaitTimeout, propStep, func(h *head) *int64 { return &h.waitTimeout }),
	strProp(pTimeoutNode, propStep, func(h *head) *string { return &h.timeoutNode }),
	strProp(pTimedOut, propStep, func(h *head) *string { return &h.timedOut }),
}
