package durable

import (
	"fmt"
	"time"
)

// GraphPolicy holds the guards of one graph beyond its nodes' own (which the Python durable
// package did not have, docs/lineage.md): how many node visits a run may make, how long a wait
// may last and where it goes when it times out, and how failing nodes are retried. A graph
// declares its own with WithPolicy; the operator may override it field by field in the
// engine's options (engine.Options.Policies, keyed by graph name: a field set there wins over
// the graph's). The zero value is the engine's defaults. A policy never enters the graph hash:
// changing it is not a new version.
type GraphPolicy struct {
	// MaxSteps bounds node visits per run of this graph (0: the engine's
	// engine.Options.MaxSteps).
	MaxSteps int
	// WaitTimeout bounds every wait_for_event of this graph that carries no timeout of its
	// own (RouteDecision.Within); 0: wait forever, as the contract.
	WaitTimeout time.Duration
	// WaitTimeoutNode is where a timed-out wait continues when the wait names no timeout node
	// of its own; empty fails the run with "orchestrator failed: wait for event '<e>' timed
	// out after <d>". The node's handlers see StepInfo.TimedOutWaitingFor.
	WaitTimeoutNode string
	// Retry retries failing node handlers (default: no retry). A node's own
	// policy (WithRetry) replaces it for that node.
	Retry RetryPolicy
}

// WithPolicy gives the graph its guards (see GraphPolicy), read back with
// GraphRegistration.Policy. The engine runs the graph under them, each field overridden by
// the operator's engine.Options.Policies entry for the graph when that field is set there.
// Build fails with "policy of graph '<name>' has a negative value", or with "policy of graph
// '<name>' references unknown wait_timeout_node '<node>'".
func WithPolicy(p GraphPolicy) BuilderOption {
	return func(o *builderOptions) { o.policy = p }
}

// Policy returns the guards the graph was built with (WithPolicy); the zero GraphPolicy when
// it declared none, or for the zero GraphRegistration.
func (g GraphRegistration[S]) Policy() GraphPolicy {
	if g.r == nil {
		return GraphPolicy{}
	}
	return g.r.policy
}

// checkPolicy returns Build's error message for a policy that cannot hold, or "".
func (b *ManifestBuilder[S]) checkPolicy() string {
	p := b.policy
	if p.MaxSteps < 0 || p.WaitTimeout < 0 || p.Retry.validate() != nil {
		return fmt.Sprintf("policy of graph '%s' has a negative value", b.graphName)
	}
	if _, ok := b.nodeIndex[p.WaitTimeoutNode]; p.WaitTimeoutNode != "" && !ok {
		return fmt.Sprintf("policy of graph '%s' references unknown wait_timeout_node '%s'", b.graphName, p.WaitTimeoutNode)
	}
	return ""
}
