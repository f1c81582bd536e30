package durable

import (
	"encoding/json"
	"fmt"
	"time"
)

// RouteAction says what a run does after a node.
type RouteAction string

// The route actions (ActionChild is in child.go). Any other value is invalid.
const (
	// ActionNext continues at RouteDecision.NextNode.
	ActionNext RouteAction = "next"
	// ActionComplete finishes the run.
	ActionComplete RouteAction = "complete"
	// ActionWaitForEvent pauses until the event RouteDecision.EventName arrives, then resumes
	// at RouteDecision.ResumeNode.
	ActionWaitForEvent RouteAction = "wait_for_event"
)

// completeShorthand is the string a route handler returns to complete the run.
const completeShorthand = "__complete__"

// RouteDecision is the outcome of route resolution. Empty strings stand for JSON null: on the
// wire all five keys are always present, empty ones as null (an empty note is therefore
// written as null).
type RouteDecision struct {
	// Action is required.
	Action RouteAction
	// NextNode is set for ActionNext and ActionSleep only.
	NextNode string
	// EventName is set for ActionWaitForEvent only.
	EventName string
	// ResumeNode is set for ActionWaitForEvent only.
	ResumeNode string
	// Note is free text kept for every action.
	Note string
	// Timeout, for ActionWaitForEvent only, bounds the wait (see Within); 0 leaves it to the
	// graph's policy (GraphPolicy.WaitTimeout). It is a runtime value: it does not
	// enter the graph hash and is not part of the decision's JSON form.
	Timeout time.Duration
	// TimeoutNode, for ActionWaitForEvent with a Timeout only, is where the run continues when
	// the wait times out; empty: the policy's WaitTimeoutNode, else the run fails.
	TimeoutNode string
	// Until, for ActionSleep only (SleepUntil), is when the sleep ends; zero: Delay after the
	// decision commits. Written as "until" (RFC 3339) in the decision's JSON form, for a sleep
	// only.
	Until time.Time
	// Delay, for ActionSleep only (Sleep), is how long the run sleeps. Written as "delay_ms" in
	// the decision's JSON form, for a sleep only.
	Delay time.Duration
	// Branches, for ActionParallel only, are the branches of the fan-out (Parallel, Map).
	Branches []Branch
	// JoinNode, for ActionParallel only, is where the run continues once every branch has
	// completed.
	JoinNode string
	// branchErr is why Map could not build its branches.
	branchErr string
	// Child, for ActionChild only, is the child run to start; the run continues at ResumeNode
	// when it has completed (StartChild).
	Child *ChildRun
	// Input, for ActionContinueAsNew only, is the new generation's initial state: a JSON
	// object (ContinueAsNew). Written as "input" in the decision's JSON form.
	Input json.RawMessage
	// inputErr is why ContinueAsNew could not encode its input; inputValue is the input
	// it was given, which the graph encodes as its state model (encodeContinue).
	inputErr   string
	inputValue any
}

// Next returns a decision to continue at node.
func Next(node string) RouteDecision { return RouteDecision{Action: ActionNext, NextNode: node} }

// Complete returns a decision to finish the run; an empty note means none.
func Complete(note string) RouteDecision { return RouteDecision{Action: ActionComplete, Note: note} }

// WaitForEvent returns a decision to wait for eventName and then resume at resumeNode. Use
// WithNote to attach a note.
func WaitForEvent(eventName, resumeNode string) RouteDecision {
	return RouteDecision{Action: ActionWaitForEvent, EventName: eventName, ResumeNode: resumeNode}
}

// Within returns a copy of the wait d bounded by timeout: when no matching event arrives
// within it, the run continues at timeoutNode (whose handlers see StepInfo.TimedOutWaitingFor),
// or fails when timeoutNode is empty and the graph's policy names no WaitTimeoutNode. It
// overrides GraphPolicy.WaitTimeout for this wait:
//
//	return durable.WaitForEvent("approval", "decide").Within(72*time.Hour, "expire"), nil
func (d RouteDecision) Within(timeout time.Duration, timeoutNode string) RouteDecision {
	d.Timeout, d.TimeoutNode = timeout, timeoutNode
	return d
}

// WithNote returns a copy of d with the note set.
func (d RouteDecision) WithNote(note string) RouteDecision {
	d.Note = note
	return d
}

// normalize validates d and returns it with the fields its action does not use cleared:
// next clears event_name and resume_node, wait_for_event clears next_node, complete clears
// event_name and resume_node; only wait_for_event keeps a timeout, only sleep (sleep.go) its
// until and delay. Errors wrap ErrInvalidRouteDecision.
func (d RouteDecision) normalize() (RouteDecision, error) {
	if d.Action != ActionWaitForEvent {
		d.Timeout, d.TimeoutNode = 0, ""
	}
	if d.Action != ActionSleep {
		d.Until, d.Delay = time.Time{}, 0
	}
	if d.Action != ActionParallel {
		d.Branches, d.JoinNode, d.branchErr = nil, "", ""
	}
	if d.Action != ActionChild {
		d.Child = nil
	}
	if d.Action != ActionContinueAsNew {
		d.Input, d.inputErr, d.inputValue = nil, "", nil
	}
	switch d.Action {
	case ActionSleep:
		return d.normalizeSleep()
	case ActionNext:
		if d.NextNode == "" {
			return d, newError(ErrInvalidRouteDecision, "action 'next' requires next_node")
		}
		d.EventName, d.ResumeNode = "", ""
	case ActionWaitForEvent:
		if d.EventName == "" || d.ResumeNode == "" {
			return d, newError(ErrInvalidRouteDecision, "action 'wait_for_event' requires both event_name and resume_node")
		}
		d.NextNode = ""
		if d.Timeout < 0 {
			return d, newError(ErrInvalidRouteDecision, "wait_for_event timeout must not be negative")
		}
		if d.Timeout == 0 && d.TimeoutNode != "" {
			return d, newError(ErrInvalidRouteDecision, "wait_for_event timeout_node requires a timeout")
		}
	case ActionParallel:
		return d.normalizeParallel()
	case ActionComplete:
		if d.NextNode != "" {
			return d, newError(ErrInvalidRouteDecision, "action 'complete' must not set next_node")
		}
		d.EventName, d.ResumeNode = "", ""
	case ActionChild:
		return d.normalizeChild()
	case ActionContinueAsNew:
		return d.normalizeContinue() // continue.go
	case "":
		return d, newError(ErrInvalidRouteDecision, "route decision requires action")
	default:
		return d, newError(ErrInvalidRouteDecision, fmt.Sprintf(
			"invalid route action '%s': expected 'next', 'complete' or 'wait_for_event'", string(d.Action)))
	}
	return d, nil
}

// routeDecisionWire is the JSON shape of RouteDecision, keys in wire order.
type routeDecisionWire struct {
	Action     *string `json:"action"`
	NextNode   *string `json:"next_node"`
	EventName  *string `json:"event_name"`
	ResumeNode *string `json:"resume_node"`
	Note       *string `json:"note"`
	// Sleep members (sleep.go), written for ActionSleep only.
	Until   *string `json:"until,omitempty"`
	DelayMS *int64  `json:"delay_ms,omitempty"`
	// JoinNode and Branches are written for ActionParallel only.
	JoinNode *string  `json:"join_node,omitempty"`
	Branches []Branch `json:"branches,omitempty"`
	// Child is written for ActionChild only (child.go).
	Child *childWire `json:"child,omitempty"`
	// Input is written for ActionContinueAsNew only (continue.go).
	Input json.RawMessage `json:"input,omitempty"`
}

// MarshalJSON writes all five keys in the order action, next_node, event_name, resume_node,
// note, empty strings as null; a sleep adds until and/or delay_ms, ActionParallel join_node
// and branches after them, ActionChild "child": {"graph", "input", "into"}, and
// ActionContinueAsNew "input". It does not validate.
func (d RouteDecision) MarshalJSON() ([]byte, error) {
	action := string(d.Action)
	w := routeDecisionWire{
		Action: &action, NextNode: nullable(d.NextNode), EventName: nullable(d.EventName),
		ResumeNode: nullable(d.ResumeNode), Note: nullable(d.Note), Child: d.childWire(), Input: d.continueWire(),
	}
	d.sleepWire(&w)
	if d.Action == ActionParallel {
		w.JoinNode, w.Branches = nullable(d.JoinNode), d.Branches
		if w.Branches == nil {
			w.Branches = []Branch{}
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a decision object (absent keys count as null), then validates and
// normalises it. Errors from validation wrap ErrInvalidRouteDecision.
func (d *RouteDecision) UnmarshalJSON(data []byte) error {
	var w routeDecisionWire
	if err := json.Unmarshal(data, &w); err != nil {
		return newError(ErrInvalidRouteDecision, "decode route decision: "+err.Error())
	}
	if w.Action == nil {
		return newError(ErrInvalidRouteDecision, "route decision requires action")
	}
	raw := RouteDecision{
		Action: RouteAction(*w.Action), NextNode: deref(w.NextNode), EventName: deref(w.EventName),
		ResumeNode: deref(w.ResumeNode), Note: deref(w.Note), JoinNode: deref(w.JoinNode), Branches: w.Branches,
		Child: w.Child.childRun(), Input: w.Input,
	}
	if err := w.sleepFields(&raw); err != nil {
		return err
	}
	n, err := raw.normalize()
	if err != nil {
		return err
	}
	*d = n
	return nil
}

// normalizeRouteResult interprets what a route handler returned.
func normalizeRouteResult(result any, node NodeDefinition) (RouteDecision, error) {
	switch r := result.(type) {
	case nil:
		return routeFallback(node), nil
	case RouteDecision:
		return r.normalize()
	case *RouteDecision:
		if r == nil {
			return routeFallback(node), nil
		}
		return r.normalize()
	case string:
		if r == completeShorthand {
			return Complete(""), nil
		}
		return Next(r).normalize()
	case map[string]any:
		if r == nil {
			return routeFallback(node), nil
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return RouteDecision{}, newError(ErrInvalidRouteDecision, "encode route decision: "+err.Error())
		}
		return decodeRouteDecision(raw)
	case json.RawMessage:
		if len(r) == 0 {
			return routeFallback(node), nil
		}
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return RouteDecision{}, newError(ErrInvalidRouteDecision, "decode route decision: "+err.Error())
		}
		return normalizeRouteResult(v, node)
	}
	return RouteDecision{}, newError(ErrUnsupportedResult, fmt.Sprintf("unsupported route decision: %T", result))
}

func decodeRouteDecision(raw []byte) (RouteDecision, error) {
	var d RouteDecision
	if err := d.UnmarshalJSON(raw); err != nil {
		return RouteDecision{}, err
	}
	return d, nil
}

// routeFallback is the decision when a route handler returns nothing.
func routeFallback(node NodeDefinition) RouteDecision {
	if node.NextNode != "" {
		return Next(node.NextNode)
	}
	return Complete("route handler returned None")
}
