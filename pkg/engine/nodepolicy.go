package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

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

// pFailure is the head property holding the JSON of the durable.NodeFailure that sent the run
// to its current node; "" when none.
const pFailure = "Failure"

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

// retryPolicy returns the retry policy of node of graph in g: the node's own
// (durable.WithRetry) over the graph's (GraphPolicy.Retry).
func (e *Engine) retryPolicy(g durable.Graph, graph, node string) RetryPolicy {
	if p := nodePolicy(g, node).Retry; p != nil {
		return *p
	}
	return e.policy(graph).Retry
}

// nodeFailed returns the outcome of a visit of h whose node handler failed with err: a retry,
// the node's failure route, or the run's failure.
func (e *Engine) nodeFailed(g durable.Graph, h *head, pol durable.NodePolicy, err error) stepOutcome {
	var herr *durable.HandlerError
	handlerFailed := errors.As(err, &herr)
	if handlerFailed && !durable.IsNonRetryable(err) {
		if retry := e.retryPolicy(g, h.graph, h.node); h.attempt+1 < int64(retry.MaxAttempts) {
			return stepOutcome{kind: outRetry, node: h.node, retryDelay: backoff(retry, h.attempt+2), retryCause: err.Error()}
		}
	}
	if handlerFailed && pol.FailureNode != "" {
		return stepOutcome{kind: outFailureRoute, node: h.node, failureNode: pol.FailureNode, failureErr: err.Error()}
	}
	o := failure("execute_node", ExecuteNodeName, err.Error())
	o.node = h.node
	return o
}

// failureRouted applies to n (built from base) an outFailureRoute outcome: the step is done,
// the run continues at the failure node, which will see the failure. It returns the step's
// history row.
func failureRouted(n, base *head, o *stepOutcome) histRow {
	n.step++
	n.visits++
	n.timedOut = ""
	n.attempt, n.notBefore = 0, 0
	n.status = StatusRunning
	n.node = o.failureNode
	n.failure = nodeFailureJSON(o.node, o.failureErr)
	n.custom = customStatus(base, o.failureNode)
	n.runnable = true
	return histRow{typ: HistoryNodeFailed, name: ExecuteNodeName, node: o.node,
		data: jsonObject("error", jstr(o.failureErr), "failure_node", jstr(o.failureNode))}
}

// nodeFailureJSON returns the head's record of node failing with msg (msg cut to
// maxFailureBytes at a rune boundary).
func nodeFailureJSON(node, msg string) string {
	if len(msg) > maxFailureBytes {
		cut := maxFailureBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	return jsonObject("node", jstr(node), "error", jstr(msg))
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
