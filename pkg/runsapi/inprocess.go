package runsapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// DefaultInProcessMaxSteps bounds the node visits of one in-process run.
const DefaultInProcessMaxSteps = 1000

// Statuses of an in-process run result.
const (
	InProcessCompleted = "completed"
	InProcessWaiting   = "waiting_for_event"
)

// InProcessGraph serves a durable registration through the hosting app (host.GraphLike): invoke
// runs it in-process, from the entrypoint, to completion or to its first wait_for_event and
// says which (InProcessResult.Status); stream emits one chunk per node visit. Nothing is
// stored: a run that stops at a wait cannot be resumed (start a durable run for that). Handlers
// see a StepInfo whose RunID is the request's thread_id, or a random id, prefixed "inprocess:".
type InProcessGraph struct {
	graph    durable.Graph
	maxSteps int
}

var _ host.GraphLike = (*InProcessGraph)(nil)

// NewInProcessGraph returns g as a hosted graph. maxSteps bounds node visits; 0 means
// DefaultInProcessMaxSteps.
func NewInProcessGraph(g durable.Graph, maxSteps int) *InProcessGraph {
	if maxSteps <= 0 {
		maxSteps = DefaultInProcessMaxSteps
	}
	return &InProcessGraph{graph: g, maxSteps: maxSteps}
}

// InProcessResult is the invoke output of an InProcessGraph, keys in field order. A completed
// run has FinalNode; a run stopped at a wait has CurrentNode, WaitingForEvent and ResumeNode.
type InProcessResult struct {
	Status          string          `json:"status"`
	GraphName       string          `json:"graph_name"`
	GraphVersion    string          `json:"graph_version"`
	GraphHash       string          `json:"graph_hash"`
	FinalNode       string          `json:"final_node,omitempty"`
	CurrentNode     string          `json:"current_node,omitempty"`
	WaitingForEvent string          `json:"waiting_for_event,omitempty"`
	ResumeNode      string          `json:"resume_node,omitempty"`
	State           json.RawMessage `json:"state"`
}

// InProcessChunk is one stream chunk: the node just visited, its route decision and the state
// after it.
type InProcessChunk struct {
	Node  string                `json:"node"`
	Route durable.RouteDecision `json:"route"`
	State json.RawMessage       `json:"state"`
}

// Invoke implements host.InvocableGraph. Handler and route errors fail the request (the
// hosting app answers 500 and logs the cause).
func (p *InProcessGraph) Invoke(ctx context.Context, req host.Request) (any, error) {
	return p.run(ctx, req, nil)
}

// Stream implements host.StreamableGraph: one InProcessChunk per node visit.
func (p *InProcessGraph) Stream(ctx context.Context, req host.Request, emit func(chunk any) error) error {
	_, err := p.run(ctx, req, emit)
	return err
}

func (p *InProcessGraph) run(ctx context.Context, req host.Request, emit func(any) error) (InProcessResult, error) {
	m := p.graph.Manifest()
	runID := req.Config.ThreadID
	if runID == "" {
		runID = inProcessRunID()
	}
	state := req.Input
	if len(state) == 0 || string(state) == "null" {
		state = json.RawMessage(`{}`)
	}
	res := InProcessResult{GraphName: m.GraphName, GraphVersion: m.Version, GraphHash: m.GraphHash}
	node := m.Entrypoint
	for visit := 1; ; visit++ {
		if visit > p.maxSteps {
			return res, fmt.Errorf("run %s in process: max steps exceeded: graph '%s' made %d node visits without completing", m.GraphName, m.GraphName, p.maxSteps)
		}
		stepCtx := graphrun.WithStepInfo(ctx, durable.StepInfo{RunID: "inprocess:" + runID, Step: int64(visit), Attempt: 1})
		next, err := p.graph.ExecuteNode(stepCtx, node, state)
		if err != nil {
			return res, fmt.Errorf("execute node %s of %s: %w", node, m.GraphName, err)
		}
		state = next
		d, err := p.graph.ResolveRoute(stepCtx, node, state)
		if err != nil {
			return res, fmt.Errorf("resolve route of %s in %s: %w", node, m.GraphName, err)
		}
		if emit != nil {
			if err := emit(InProcessChunk{Node: node, Route: d, State: state}); err != nil {
				return res, err
			}
		}
		res.State = state
		switch d.Action {
		case durable.ActionComplete:
			res.Status, res.FinalNode = InProcessCompleted, node
			return res, nil
		case durable.ActionWaitForEvent:
			res.Status, res.CurrentNode, res.WaitingForEvent, res.ResumeNode = InProcessWaiting, node, d.EventName, d.ResumeNode
			return res, nil
		case durable.ActionChild:
			return res, fmt.Errorf("run %s in process: node '%s' starts a child run of graph '%s': child runs need a durable run", m.GraphName, node, d.Child.Graph)
		case durable.ActionContinueAsNew:
			return res, fmt.Errorf("run %s in process: node '%s' continues as new: continue-as-new needs a durable run", m.GraphName, node)
		}
		node = d.NextNode
	}
}

func inProcessRunID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
