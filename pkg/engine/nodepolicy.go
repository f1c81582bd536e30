package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Per-node policies (durable.WithRetry, durable.WithTimeout, durable.WithFailureRoute): how a
// visit runs a node's handler and what a failed visit does.
//
// A failed attempt of a node handler (an error, a panic, a timeout) is retried under the
// node's own retry policy, else the graph's (GraphPolicy.Retry), unless the error is marked
// durable.NonRetryable. A node that failed for good fails the run, or, with a failure route,
// commits a node_failed row and continues at its failure node with the state it received; the
// failure node's handlers see durable.StepInfo.Failure (kept on the head until that node's
// visit commits).

// HistoryNodeFailed is the history row of a node that failed for good and whose failure route
// the run takes: data {"error": "<message>", "failure_node": "<node>"}.
const HistoryNodeFailed = "node_failed"

// maxFailureBytes bounds the error message kept on the head for StepInfo.Failure (a table
// property); the node_failed row keeps it whole.
const maxFailureBytes = 4 << 10

// nodePolicy returns the policy of node in g: g's own when it implements
// graphrun.NodePolicies, else only the failure route its manifest declares.
func nodePolicy(g durable.Graph, node string) durable.NodePolicy {
	if np, ok := graphrun.Of(g).(graphrun.NodePolicies[durable.NodePolicy]); ok {
		return np.NodePolicy(node)
	}
	for _, n := range g.Manifest().Nodes {
		if n.Name == node {
			return durable.NodePolicy{FailureNode: n.FailureNode}
		}
	}
	return durable.NodePolicy{}
}

// nodeFailed returns the outcome of a visit of h whose node handler failed with err (pol is
// the node's policy): a retry, the node's failure route, or the run's failure.
func nodeFailed(sc *stepCtx, h *head, pol durable.NodePolicy, err error) outcome {
	var herr *durable.HandlerError
	handlerFailed := errors.As(err, &herr)
	if handlerFailed && !durable.IsNonRetryable(err) {
		if retry := sc.retry(pol); h.attempt+1 < int64(retry.MaxAttempts) {
			return &retryScheduled{node: h.node, delay: backoff(retry, h.attempt+2), cause: err.Error()}
		}
	}
	if handlerFailed && pol.FailureNode != "" {
		return &failureRouted{node: h.node, to: pol.FailureNode, err: err.Error(), visits: 1}
	}
	o := failure("execute_node", ExecuteNodeName, err.Error())
	o.node = h.node
	return o
}

// retryScheduled is a visit whose node failed and will be retried after a back-off.
type retryScheduled struct {
	node  string
	delay time.Duration
	cause string
}

func (o *retryScheduled) stepNode() string { return o.node }

func (o *retryScheduled) apply(c *commitBuilder) {
	n := c.n
	n.attempt++
	n.notBefore = c.now.Add(o.delay).UnixNano()
	n.runnable = true
	c.row(HistoryNodeRetryScheduled, ExecuteNodeName, o.node,
		jsonObject("attempt", itoa(n.attempt+1), "delay_ms", itoa(o.delay.Milliseconds()), "error", jstr(o.cause)))
}

// rebase drops the retry when another writer scheduled the step's attempt meanwhile.
func (o *retryScheduled) rebase(_ context.Context, _ *Engine, base, fresh *head) error {
	if fresh.attempt != base.attempt {
		return errDropped
	}
	return nil
}

// failureRouted is a node that failed for good (or a fan-out's branch that did) and whose
// failure route the run takes: the step is done, the run continues at the failure node to,
// which will see the failure. visits is the node visits the step ends (MaxSteps): 1, the
// failed node's, or a fan-out's branches (branchFailed: the fan-out's own visit was counted
// when it committed).
type failureRouted struct {
	node, to, err string
	visits        int64
}

func (o *failureRouted) stepNode() string { return o.node }

func (o *failureRouted) apply(c *commitBuilder) {
	n := c.n
	n.step++
	n.visits += o.visits
	n.timedOut = ""
	n.attempt, n.notBefore = 0, 0
	n.status = StatusRunning
	n.node = o.to
	n.failure = nodeFailureJSON(o.node, o.err)
	n.custom = customStatus(c.base, o.to)
	n.runnable = true
	c.row(HistoryNodeFailed, ExecuteNodeName, o.node, jsonObject("error", jstr(o.err), "failure_node", jstr(o.to)))
}

// nodeFailureJSON returns the head's record of node failing with msg (msg cut to
// maxFailureBytes at a rune boundary).
func nodeFailureJSON(node, msg string) string {
	return jsonObject("node", jstr(node), "error", jstr(cutAtRune(msg, maxFailureBytes)))
}

// nodeFailureOf returns the failure recorded on h, or nil.
func nodeFailureOf(h *head) *durable.NodeFailure {
	if h.failure == "" {
		return nil
	}
	var f durable.NodeFailure
	if json.Unmarshal([]byte(h.failure), &f) != nil {
		return nil
	}
	return &f
}

// executeNode runs the handler of node, bounded by timeout when it is positive: the handler's
// context gets the deadline, and the engine stops waiting at it even when the handler ignores
// its context (its goroutine is left to finish on its own; what it returns is discarded). An
// attempt still running at the deadline is a timed-out attempt, a *durable.HandlerError the
// retry policy retries, whatever the handler returns afterwards. When ctx itself ends first,
// its error is returned (the step's infrastructure, not the handler, stopped).
func executeNode(ctx context.Context, g durable.Graph, node string, timeout time.Duration, state json.RawMessage) (json.RawMessage, error) {
	if timeout <= 0 {
		return g.ExecuteNode(ctx, node, state)
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		state json.RawMessage
		err   error
	}
	done := make(chan result, 1) // buffered: an abandoned handler's goroutine never blocks
	go func() {
		var r result
		defer func() { done <- r }()
		defer graphrun.RecoverHandler("node", node, &r.err) // a custom Graph's panic must not crash the process
		r.state, r.err = g.ExecuteNode(tctx, node, state)
	}()
	select {
	case r := <-done:
		return r.state, r.err
	case <-tctx.Done():
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, &durable.HandlerError{Kind: "node", Name: node,
		Err: fmt.Errorf("node '%s' timed out after %s: %w", node, timeout, context.DeadlineExceeded)}
}

// backoff returns the delay of p before attempt number next (2 = first retry).
func backoff(p RetryPolicy, next int64) time.Duration {
	d, maxD, mult := p.InitialBackoff, p.MaxBackoff, p.Multiplier
	if d <= 0 {
		d = time.Second
	}
	if maxD <= 0 {
		maxD = 5 * time.Minute
	}
	if mult < 1 {
		mult = 2
	}
	for i := int64(2); i < next && d < maxD; i++ {
		d = time.Duration(float64(d) * mult)
	}
	return min(d, maxD)
}
