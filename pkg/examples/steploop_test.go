package examples

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// event is an external event posted to a run in the step loop.
type event struct {
	name    string
	payload string
}

// runResult is where the tiny step loop stopped.
type runResult struct {
	completed bool                    // a route returned complete
	finalNode string                  // node whose route completed the run
	state     json.RawMessage         // state after the last step
	waits     []durable.RouteDecision // every wait_for_event decision, in order
	visits    []string                // nodes visited, in order
	waiting   string                  // event awaited when the loop ran out of events
}

// runSteps is a tiny in-memory version of the orchestration loop: execute
// the node, resolve its route, follow next, or consume the oldest buffered event with the
// awaited name, apply it and resume. It stops when the run completes or waits with no matching
// event buffered. Errors fail the test.
func runSteps(t *testing.T, g durable.Graph, input string, events ...event) runResult {
	t.Helper()
	ctx := context.Background()
	node := g.Manifest().Entrypoint
	state := json.RawMessage(input)
	pending := append([]event(nil), events...)
	var res runResult
	for visit := 1; ; visit++ {
		if visit > 100 {
			t.Fatalf("run made %d visits without completing", visit-1)
		}
		res.visits = append(res.visits, node)
		var err error
		stepCtx := graphrun.WithStepInfo(ctx, durable.StepInfo{RunID: "test-run", Step: int64(visit), Attempt: 1})
		if state, err = g.ExecuteNode(stepCtx, node, state); err != nil {
			t.Fatalf("execute_node failed: node=%s: %v", node, err)
		}
		d, err := g.ResolveRoute(stepCtx, node, state)
		if err != nil {
			t.Fatalf("resolve_route failed: node=%s: %v", node, err)
		}
		switch d.Action {
		case durable.ActionComplete:
			res.completed, res.finalNode, res.state = true, node, state
			return res
		case durable.ActionNext:
			node = d.NextNode
		case durable.ActionWaitForEvent:
			res.waits = append(res.waits, d)
			i := 0
			for i < len(pending) && pending[i].name != d.EventName {
				i++
			}
			if i == len(pending) {
				res.state, res.waiting = state, d.EventName
				return res
			}
			ev := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			if state, err = g.ApplyEvent(stepCtx, ev.name, state, json.RawMessage(ev.payload)); err != nil {
				t.Fatalf("apply_event failed: event=%s: %v", ev.name, err)
			}
			node = d.ResumeNode
		default:
			t.Fatalf("route returned action %q", d.Action)
		}
	}
}
