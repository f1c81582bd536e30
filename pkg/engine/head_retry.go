package engine

// Properties of a failed step's retry and failure route (head.headRetry).
const (
	pAttempt, pNotBefore = "Attempt", "NotBefore"
	// pFailure is the head property holding the JSON of the durable.NodeFailure that sent the
	// run to its current node; "" when none.
	pFailure = "Failure"
)

// headRetry is the part of the head that the retry policy and failure routes keep
// (nodepolicy.go), and the time before which the next step may not run.
type headRetry struct {
	attempt   int64  // failed attempts of the current step (retry policy)
	notBefore int64  // unix nanos, 0: none (retry back-off, sleep)
	failure   string // the durable.NodeFailure that routed the run to node, as JSON; "" otherwise (nodepolicy.go)
}

// headRetryProps declares the properties of headRetry: every step rewrites them.
var headRetryProps = []headProp{
	intProp(pAttempt, propStep, func(h *head) *int64 { return &h.attempt }),
	intProp(pNotBefore, propStep, func(h *head) *int64 { return &h.notBefore }),
	strProp(pFailure, propStep, func(h *head) *string { return &h.failure }),
}
