package durable

import (
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// RetryPolicy retries a node whose handler failed (returned an error, panicked or timed out),
// with exponential back-off. Errors wrapped with NonRetryable, state validation errors and
// route or event handler errors are never retried. A graph's policy is GraphPolicy.Retry
// (WithPolicy, engine.Options.Policies); a node's own (WithRetry) replaces it for that node.
type RetryPolicy struct {
	// MaxAttempts counts all attempts, the first included; 0 or 1 means no retry.
	MaxAttempts int
	// InitialBackoff is the delay before the second attempt (default 1 s).
	InitialBackoff time.Duration
	// MaxBackoff caps the delay (default 5 min).
	MaxBackoff time.Duration
	// Multiplier grows the delay per attempt (default 2).
	Multiplier float64
}

// validate reports a negative field.
func (p RetryPolicy) validate() error {
	if p.MaxAttempts < 0 || p.InitialBackoff < 0 || p.MaxBackoff < 0 || p.Multiplier < 0 {
		return errors.New("negative value")
	}
	return nil
}

// NodePolicy is how the engine runs one node beyond its handler: its retries, its timeout and
// where the run goes when the node fails. The zero value is the graph's defaults.
type NodePolicy struct {
	// Retry is the node's own retry policy (WithRetry); nil: the graph's
	// (GraphPolicy.Retry).
	Retry *RetryPolicy
	// Timeout bounds each attempt of the node's handler (WithTimeout); 0: none.
	Timeout time.Duration
	// FailureNode is where the run continues when the node fails for good (WithFailureRoute);
	// empty: the run fails.
	FailureNode string
}

// NodePolicy returns the policy node was declared with (WithRetry, WithTimeout,
// WithFailureRoute; the zero NodePolicy for an unknown node or the zero GraphRegistration).
// The Retry it returns is the caller's copy.
func (g GraphRegistration[S]) NodePolicy(node string) NodePolicy { return g.r.NodePolicy(node) }

// NodePolicy implements graphrun.NodePolicies (GraphRegistration.NodePolicy).
func (r *registration[S]) NodePolicy(node string) NodePolicy {
	if r == nil {
		return NodePolicy{}
	}
	p := r.policies[node]
	if p.Retry != nil {
		retry := *p.Retry // the caller's copy
		p.Retry = &retry
	}
	if n, ok := r.nodes[node]; ok {
		p.FailureNode = n.def.FailureNode
	}
	return p
}

var _ graphrun.NodePolicies[NodePolicy] = (*registration[struct{}])(nil)

// WithRetry gives the node its own retry policy, replacing the graph's
// (GraphPolicy.Retry) for this node; RetryPolicy{MaxAttempts: 1} turns retries off for
// it. The policy does not enter the graph hash. A negative field fails AddNode with
// "retry policy of node '<name>' has a negative value".
func WithRetry(p RetryPolicy) NodeOption {
	return func(o *nodeOptions) { o.retry = &p }
}

// WithTimeout bounds each attempt of the node's handler: its context gets a deadline d after
// the attempt starts, and an attempt that has not returned by then is a failed attempt
// ("node '<name>' timed out after <d>"), retried under the retry policy like any failure. The
// engine stops waiting at the deadline even when the handler ignores its context (that
// handler's goroutine is abandoned, still running; see docs/durable-graphs.md). Keep d well
// below the step budget and the Functions timeout: a worker that dies first is a restart, not
// a timeout. The route handler is not bounded. 0 means no timeout; the timeout does not enter
// the graph hash. A negative d fails AddNode with "timeout of node '<name>' must not be
// negative".
func WithTimeout(d time.Duration) NodeOption {
	return func(o *nodeOptions) { o.timeout = d }
}

// WithFailureRoute sends the run to node when this node's handler fails for good (its error is
// not retried, or its retries are spent) instead of failing the run. The state is the one the
// failed node received; the history records a node_failed row ({"error", "failure_node"}); the
// handlers of node see StepInfo.Failure. Route handler errors and state errors still fail the
// run. The failure route enters the graph hash ("failure_node" in the node's canonical object,
// present only when set); Build fails with "node '<name>' references unknown failure_node
// '<node>'" when node is not in the graph.
func WithFailureRoute(node string) NodeOption {
	return func(o *nodeOptions) { o.failureNode = node }
}

// NodeFailure describes the node failure that sent a run along a failure route (StepInfo.Failure).
type NodeFailure struct {
	// Node is the node that failed.
	Node string `json:"node"`
	// Error is its error message, truncated to a few kilobytes (the history's node_failed row
	// keeps it whole).
	Error string `json:"error"`
}

// nonRetryableError marks an error that is never retried.
type nonRetryableError struct{ err error }

func (e *nonRetryableError) Error() string { return e.err.Error() }
func (e *nonRetryableError) Unwrap() error { return e.err }

// NonRetryable wraps err so that the engine never retries the node that returned it, whatever
// the retry policy: the node fails at once (and takes its failure route, if any). The message
// is err's, unchanged, and errors.Is/As see through the wrapper. NonRetryable(nil) is nil.
//
//	if resp.StatusCode == http.StatusBadRequest {
//		return s, durable.NonRetryable(fmt.Errorf("quote service refused %q", s.Symbol))
//	}
func NonRetryable(err error) error {
	if err == nil {
		return nil
	}
	return &nonRetryableError{err: err}
}

// IsNonRetryable reports whether err, or an error it wraps, was marked by NonRetryable.
func IsNonRetryable(err error) bool {
	var nr *nonRetryableError
	return errors.As(err, &nr)
}

// checkNodePolicy validates the policy options of node name.
func checkNodePolicy(name string, o *nodeOptions) string {
	if o.retry != nil && o.retry.validate() != nil {
		return fmt.Sprintf("retry policy of node '%s' has a negative value", name)
	}
	if o.timeout < 0 {
		return fmt.Sprintf("timeout of node '%s' must not be negative", name)
	}
	return ""
}

// nodePolicyOf returns the policy AddNode records for a node (FailureNode lives in its
// definition).
func nodePolicyOf(o *nodeOptions) (NodePolicy, bool) {
	p := NodePolicy{Retry: o.retry, Timeout: o.timeout}
	return p, p.Retry != nil || p.Timeout != 0
}
