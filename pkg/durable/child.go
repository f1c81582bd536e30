package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// ActionChild starts a child run of another registered graph and pauses the run until the
// child finishes; the run then continues at RouteDecision.ResumeNode (see StartChild).
const ActionChild RouteAction = "child"

// ChildRun is what a child run starts with (RouteDecision.Child, for ActionChild only).
type ChildRun struct {
	// Graph names the registered graph the child runs; the child starts on its latest
	// version, as a run started over HTTP does.
	Graph string
	// Input is the child's initial state: a JSON object (empty or null means {}), checked
	// against the child graph's state model before anything is stored.
	Input json.RawMessage
	// Into names the state field of the parent that receives the child's final state when
	// the child completes; "" drops it.
	Into string

	err error // an input StartChild could not encode
}

// StartChild returns a decision to start a child run of graph with input as its initial
// state, and to continue at resume once the child has completed. input is encoded as JSON
// (a json.RawMessage is taken as it is; nil means {}); it must be an object, typically the
// child's state model. Use Into to receive the child's final state in a state field:
//
//	return durable.StartChild("billing", Invoice{Order: s.Order}, "ship").Into("invoice"), nil
//
// The child's instance id derives from the parent's step (engine.ChildInstanceID), so a step
// that runs again never starts a second child. A child that fails or is cancelled fails the
// parent; a graph that is not registered fails the parent at this step.
func StartChild(graph string, input any, resume string) RouteDecision {
	c := &ChildRun{Graph: graph}
	switch v := input.(type) {
	case nil:
	case json.RawMessage:
		c.Input = v
	default:
		raw, err := json.Marshal(input)
		if err != nil {
			c.err = err
		}
		c.Input = raw
	}
	return RouteDecision{Action: ActionChild, Child: c, ResumeNode: resume}
}

// Into returns a copy of a decision of StartChild whose child's final state goes into the
// state field named field (its JSON name) when the child completes. Other decisions are
// returned unchanged.
func (d RouteDecision) Into(field string) RouteDecision {
	if d.Child == nil {
		return d
	}
	c := *d.Child
	c.Into = field
	d.Child = &c
	return d
}

// normalizeChild validates a decision of ActionChild: a graph, a resume node and an input
// that is a JSON object (empty and null read as {}). Errors wrap ErrInvalidRouteDecision.
func (d RouteDecision) normalizeChild() (RouteDecision, error) {
	if d.Child == nil || d.Child.Graph == "" || d.ResumeNode == "" {
		return d, newError(ErrInvalidRouteDecision, "action 'child' requires child.graph and resume_node")
	}
	c := *d.Child
	if c.err != nil {
		return d, newError(ErrInvalidRouteDecision, "encode child run input: "+c.err.Error())
	}
	in := bytes.TrimSpace(c.Input)
	switch {
	case len(in) == 0 || string(in) == "null":
		in = []byte("{}")
	case in[0] != '{' || !json.Valid(in):
		return d, newError(ErrInvalidRouteDecision, "child run input must be a JSON object")
	}
	c.Input = json.RawMessage(in)
	d.Child = &c
	d.NextNode, d.EventName = "", ""
	return d, nil
}

// childWire is the JSON shape of ChildRun in a route decision: {"graph", "input", "into"}.
type childWire struct {
	Graph *string         `json:"graph"`
	Input json.RawMessage `json:"input"`
	Into  *string         `json:"into"`
}

// childWire returns the JSON shape of the decision's child run, nil for other actions.
func (d RouteDecision) childWire() *childWire {
	if d.Action != ActionChild || d.Child == nil {
		return nil
	}
	in := d.Child.Input
	if len(bytes.TrimSpace(in)) == 0 || !json.Valid(in) {
		in = json.RawMessage("{}")
	}
	return &childWire{Graph: nullable(d.Child.Graph), Input: in, Into: nullable(d.Child.Into)}
}

// childRun returns the ChildRun a decoded "child" member describes, nil for none.
func (w *childWire) childRun() *ChildRun {
	if w == nil {
		return nil
	}
	return &ChildRun{Graph: deref(w.Graph), Input: w.Input, Into: deref(w.Into)}
}

// checkChild verifies that a child decision's resume node exists and that Into names a state
// field.
func (r *registration[S]) checkChild(d RouteDecision) error {
	if _, ok := r.nodes[d.ResumeNode]; !ok {
		return newError(ErrUnknownNode, fmt.Sprintf("route decision references unknown resume_node '%s' in graph '%s'", d.ResumeNode, r.manifest.GraphName))
	}
	if into := d.Child.Into; into != "" {
		if _, ok := r.schema.byName[into]; !ok {
			return newError(ErrInvalidRouteDecision, fmt.Sprintf("child run into references unknown state field '%s' of graph '%s'", into, r.manifest.GraphName))
		}
	}
	return nil
}

// SetStateField implements graphrun.ChildOutputSetter.
func (r *registration[S]) SetStateField(_ context.Context, state json.RawMessage, field string, value json.RawMessage) (json.RawMessage, error) {
	if r == nil {
		return nil, errNotBuilt
	}
	var s S
	if err := r.schema.decode(state, &s); err != nil {
		return nil, err
	}
	update, err := json.Marshal(map[string]json.RawMessage{field: value})
	if err != nil {
		return nil, r.schema.errorf(field, "encode value: %v", err)
	}
	if err := r.schema.merge(reflect.ValueOf(&s).Elem(), &s, json.RawMessage(update)); err != nil {
		return nil, err
	}
	return r.schema.dump(&s)
}

var _ graphrun.ChildOutputSetter = (*registration[struct{}])(nil)
