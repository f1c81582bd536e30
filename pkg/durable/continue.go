package durable

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// ActionContinueAsNew ends the run's current history and continues the same run (the same
// instance id, on the same pinned graph version) from the graph's entrypoint with
// RouteDecision.Input as its new state: Temporal's continue-as-new. See ContinueAsNew.
const ActionContinueAsNew RouteAction = "continue_as_new"

// ContinueAsNew returns a decision to end the run's current history and continue the run
// from its entrypoint with input as its new state, its generation one more. A run that loops
// for months — an agent that wakes every morning — continues as new every so often, so that
// it never reaches its MaxSteps (counted per generation) and no history grows for ever:
//
//	if s.Turns >= 50 {
//		return durable.ContinueAsNew(Agent{Goal: s.Goal, Summary: summarize(s)}), nil
//	}
//
// input is encoded as JSON (a json.RawMessage is taken as it is; nil means {}); it must be a
// JSON object that the graph's state model accepts, as a start's input must, else the run
// fails at this route. The engine keeps the history of the generation that ends, for reading
// (and for its feed), until the next one ends; events raised and not yet applied stay in the
// run's inbox for the new generation. In the map form of a route the same decision reads
// {"action": "continue_as_new", "input": {...}}.
func ContinueAsNew(input any) RouteDecision {
	d := RouteDecision{Action: ActionContinueAsNew}
	switch v := input.(type) {
	case nil:
	case json.RawMessage:
		d.Input = v
	default:
		raw, err := json.Marshal(input)
		if err != nil {
			d.inputErr = err.Error()
		}
		d.Input, d.inputValue = raw, input
	}
	return d
}

// encodeContinue returns d, a continue-as-new decision of a route of r's graph, with an input
// of the graph's state type (S or *S) encoded as a start's typed input is (EncodeState:
// every field, nil slices and maps as empty, the model's Validate run); other decisions and
// inputs are returned as they are. Errors wrap ErrInvalidRouteDecision.
func (r *registration[S]) encodeContinue(d RouteDecision) (RouteDecision, error) {
	if d.Action != ActionContinueAsNew || d.inputErr != "" {
		return d, nil
	}
	var s S
	switch v := d.inputValue.(type) {
	case S:
		s = v
	case *S:
		if v == nil {
			return d, nil
		}
		s = *v
	default:
		return d, nil
	}
	if err := r.schema.finish(reflect.ValueOf(&s).Elem(), &s); err != nil {
		return d, newError(ErrInvalidRouteDecision, "continue_as_new input: "+err.Error())
	}
	raw, err := r.schema.dump(&s)
	if err != nil {
		return d, newError(ErrInvalidRouteDecision, "encode continue_as_new input: "+err.Error())
	}
	d.Input = raw
	return d, nil
}

// normalizeContinue validates a decision of ActionContinueAsNew: an input that is a JSON
// object (empty and null read as {}). Errors wrap ErrInvalidRouteDecision.
func (d RouteDecision) normalizeContinue() (RouteDecision, error) {
	d.NextNode, d.EventName, d.ResumeNode = "", "", ""
	if d.inputErr != "" {
		return d, newError(ErrInvalidRouteDecision, "encode continue_as_new input: "+d.inputErr)
	}
	in := bytes.TrimSpace(d.Input)
	switch {
	case len(in) == 0 || string(in) == "null":
		in = []byte("{}")
	case in[0] != '{' || !json.Valid(in):
		return d, newError(ErrInvalidRouteDecision, "continue_as_new input must be a JSON object")
	}
	d.Input = json.RawMessage(in)
	return d, nil
}

// continueWire returns the "input" member of a continue-as-new decision's JSON form, nil for
// other actions.
func (d RouteDecision) continueWire() json.RawMessage {
	if d.Action != ActionContinueAsNew {
		return nil
	}
	in := bytes.TrimSpace(d.Input)
	if len(in) == 0 || !json.Valid(in) {
		return json.RawMessage("{}")
	}
	return json.RawMessage(in)
}
