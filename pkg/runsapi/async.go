package runsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Names of the one-node durable graph that runs a hosted graph asynchronously.
const (
	// AsyncNodeName is the single (terminal) node; it calls the hosted graph's Invoke.
	AsyncNodeName = "invoke"
	// asyncHandlerName is its handler name in the manifest (it enters the graph hash).
	asyncHandlerName = "funcgraph.host.invoke"
	// asyncStateModelName is the manifest's state model name.
	asyncStateModelName = "AsyncInvocation"
)

// asyncGraph is a hosted graph (host.InvocableGraph) seen as a one-node durable graph, so the
// engine can run it as a durable run: POST /api/graphs/{name}/runs starts it, the run's node
// calls Invoke once with the run's input, and status and cancel use the run routes.
type asyncGraph struct {
	manifest durable.GraphManifest
	graph    host.InvocableGraph
}

// NewAsyncGraph wraps the hosted graph g, registered in the hosting app as name, as a durable
// graph with one terminal node AsyncNodeName. The run's initial state is the posted input; the
// node calls g.Invoke with it (graphs with a checkpointer get the run id as thread_id) and the
// final state is {"input": <initial state>, "output": <output>}, the output written as the
// invoke route writes it (an object as is, anything else as {"result": "<text>"}). An error
// from Invoke fails the run. The hosted graph runs outside the hosting app's thread lock.
func NewAsyncGraph(name string, g host.InvocableGraph) (durable.Graph, error) {
	if g == nil {
		return nil, newError(durable.ErrInvalidGraph, "callable cannot be None")
	}
	m := durable.GraphManifest{
		GraphName: name, Version: durable.DefaultVersion, StateModelName: asyncStateModelName, Entrypoint: AsyncNodeName,
		Nodes:             []durable.NodeDefinition{{Name: AsyncNodeName, HandlerName: asyncHandlerName, Terminal: true}},
		EventHandlerNames: []string{}, Metadata: map[string]any{"async_mode": true},
	}
	hash, err := m.ComputeHash()
	if err != nil {
		return nil, fmt.Errorf("hash async graph %s: %w", name, err)
	}
	m.GraphHash = hash
	return &asyncGraph{manifest: m, graph: g}, nil
}

// Manifest implements Graph.
func (a *asyncGraph) Manifest() durable.GraphManifest { return a.manifest }

// asyncState is the final state of an async run, keys in field order.
type asyncState struct {
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

// ExecuteNode implements Graph: it calls the hosted graph's Invoke.
func (a *asyncGraph) ExecuteNode(ctx context.Context, node string, state json.RawMessage) (out json.RawMessage, err error) {
	if node != AsyncNodeName {
		return nil, a.unknownNode(node)
	}
	if len(state) == 0 || string(state) == "null" {
		state = json.RawMessage(`{}`)
	}
	req := host.Request{Input: state}
	if cp, ok := a.graph.(host.Checkpointed); ok && cp.HasCheckpointer() {
		if info, ok := durable.StepInfoFrom(ctx); ok {
			req.Config.ThreadID = info.RunID
		}
	}
	defer graphrun.RecoverHandler("node", node, &err)
	result, err := a.graph.Invoke(ctx, req)
	if err != nil {
		return nil, &durable.HandlerError{Kind: "node", Name: node, Err: err}
	}
	output, err := invokeOutput(result)
	if err != nil {
		return nil, &durable.HandlerError{Kind: "node", Name: node, Err: err}
	}
	return json.Marshal(asyncState{Input: state, Output: output})
}

// invokeOutput writes an Invoke result as the invoke route does: an object as is, a string as
// {"result": s}, anything else as {"result": "<compact JSON>"}.
func invokeOutput(result any) (json.RawMessage, error) {
	if s, ok := result.(string); ok {
		return json.Marshal(map[string]string{"result": s})
	}
	data, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode graph output: %w", err)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, data) == nil {
		data = compact.Bytes()
	}
	if len(data) > 0 && data[0] == '{' {
		return data, nil
	}
	return json.Marshal(map[string]string{"result": string(data)})
}

// ResolveRoute implements Graph: the one node is terminal.
func (a *asyncGraph) ResolveRoute(_ context.Context, node string, _ json.RawMessage) (durable.RouteDecision, error) {
	if node != AsyncNodeName {
		return durable.RouteDecision{}, a.unknownNode(node)
	}
	return durable.Complete(""), nil
}

// ApplyEvent implements Graph: an async graph handles no events.
func (a *asyncGraph) ApplyEvent(_ context.Context, event string, _, _ json.RawMessage) (json.RawMessage, error) {
	return nil, newError(durable.ErrUnknownEvent, fmt.Sprintf("unknown event handler '%s'", event))
}

func (a *asyncGraph) unknownNode(node string) error {
	return newError(durable.ErrUnknownNode, fmt.Sprintf("unknown node '%s' in graph '%s'", node, a.manifest.GraphName))
}

// bridgeError carries a model sentinel (errors.Is) with the message the durable model gives
// for it, word for word (parity: docs/lineage.md).
type bridgeError struct {
	kind error
	msg  string
}

func (e *bridgeError) Error() string { return e.msg }
func (e *bridgeError) Unwrap() error { return e.kind }

func newError(kind error, msg string) error { return &bridgeError{kind: kind, msg: msg} }
