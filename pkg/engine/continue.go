package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Continue as new (durable.ContinueAsNew). A route that returns it ends the run's current
// history and continues the same run from the graph's entrypoint with the decision's input as
// its state, on the version the run is pinned to: the run's generation (head Continued) is one
// more, its node visits (MaxSteps) count from 0 again, and its status, Input and feed go on
// under the same instance id and nonce.
//
// The transition is one commit, like any step's: a merge of the head conditioned on its ETag
// with the visit's node_completed and route_resolved rows and a continued_as_new row, the new
// generation's first, carrying {"generation", "initial_state"}. A reply lost on that batch is
// settled by reading its witness (commit.go), so a run never continues twice from one
// visit, and a crash before or after it loses nothing: before, the work item runs the step
// again; after, the head is the new generation's and the next work item runs its entrypoint.
//
// Rows are numbered on across generations (the sequence numbers keep growing; the step count
// too, so idempotency keys and child ids stay unique), and the head records where the current
// generation's rows begin (ContinuedSeq) and where the previous one's began
// (PrevContinuedSeq). The run's history (History) is the current generation's rows; the
// previous generation's stay readable (GenerationHistory) and in the feed, whose positions
// therefore carry across a continue-as-new. The rows of older generations are deleted once
// the run continues again (trimGenerations), so a run that loops for months keeps at most two
// generations of history; a purge, and retention, delete every row the run holds.
//
// Events raised and not yet applied stay in the inbox for the new generation. At a route no
// branch is open (a fan-out's route runs after its join) and no child run is awaited (a route
// that starts one waits for it), so nothing of the old generation is left running.

// HistoryContinuedAsNew is the history row that begins a generation after a continue-as-new:
// data {"generation": <n>, "initial_state": {...}}. Its node is the entrypoint the generation
// starts at.
const HistoryContinuedAsNew = "continued_as_new"

// continueVisit is the outcome of visit v, whose route continues the run as new: the new
// generation's input checked against the graph's state model (a bad one fails the run at this
// route, keeping the node's state), and the run's new Input built around it.
func (e *Engine) continueVisit(ctx context.Context, sc *stepCtx, h *head, v visited) (outcome, error) {
	input, err := normalizeObject(v.decision.Input)
	if c, ok := graphrun.Of(sc.g).(graphrun.StateChecker); ok && err == nil {
		err = c.CheckState(input)
	}
	if err != nil {
		cause := "cannot continue as new: invalid input: " + err.Error()
		e.log.Warn("resolve_route failed: graph="+h.graph+" hash="+h.hash+" node="+h.node, "run_id", h.runID, "error", cause)
		f := failure("resolve_route", ResolveRouteName, cause)
		f.node, f.state, f.emitted = h.node, v.state, v.emitted
		return f, nil
	}
	raw, err := e.readSpilled(ctx, h.inputJSON, h.inputRef)
	if err != nil {
		return nil, fmt.Errorf("read input of run %s: %w", h.runID, err)
	}
	var in struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return nil, fmt.Errorf("decode input of run %s: %w", h.runID, err)
	}
	meta := "{}"
	if len(in.Metadata) > 0 {
		meta = string(in.Metadata)
	}
	entry := sc.g.Manifest().Entrypoint
	return &continuedAsNew{visited: v, entry: entry, input: input,
		runInput: jsonObject("graph_name", jstr(h.graph), "graph_hash", jstr(h.hash),
			"initial_state", string(input), "current_node", "null", "metadata", meta)}, nil
}

// continuedAsNew is a visit whose route continues the run as new.
type continuedAsNew struct {
	visited
	entry    string          // the graph's entrypoint, the new generation's first node
	input    json.RawMessage // the new generation's initial state
	runInput string          // the run's Input from now on: the start's, with the new initial_state
}

func (o *continuedAsNew) apply(c *commitBuilder) {
	o.visited.apply(c) // the visit's own rows, in the generation it ends
	n, base := c.n, c.base
	n.continued = base.continued + 1
	n.prevContinuedSeq = base.generationStart()
	n.visits = 0 // MaxSteps counts per generation
	n.node = o.entry
	n.inputJSON, n.inputRef = o.runInput, ""
	c.setState(o.input)
	n.custom = customStatus(base, o.entry)
	n.runnable = true
	c.row(HistoryContinuedAsNew, OrchestratorName, o.entry,
		jsonObject("generation", itoa(n.continued), "initial_state", string(o.input)))
}

// addOps records where the new generation's rows begin — its continued_as_new row, the
// commit's last — and writes the run's new Input (a start's property, which a step's merge
// does not compare).
func (o *continuedAsNew) addOps(c *commitBuilder) {
	n, p := c.n, c.ops[0].Entity.Properties
	n.continuedSeq = n.histSeq
	p[pContinuedSeq] = n.continuedSeq
	p[pInput], p[pInput+refSuffix] = n.inputJSON, ""
}

// proceed deletes the history of the generations before the one that just ended, then goes on
// as after any step: the new generation's entrypoint runs at once.
func (o *continuedAsNew) proceed(ctx context.Context, e *Engine, n *head) (*head, bool, error) {
	if err := e.trimGenerations(ctx, n); err != nil {
		// Left for the next continue-as-new, which deletes every row before the previous
		// generation, or the run's purge.
		e.log.Warn("continue as new: delete the history of older generations; left to the next one", "run_id", n.runID, "error", err.Error())
	}
	return e.proceed(ctx, n)
}

// trimGenerations deletes the history rows of h's generations before the previous one: the
// rows before PrevContinuedSeq, listed in one range of the partition and deleted with If-Match
// on the ETags they were listed with (a late batch never deletes a row of a run that
// replaced this one). A generation's rows are bounded by its MaxSteps, so this is bounded too.
func (e *Engine) trimGenerations(ctx context.Context, h *head) error {
	if h.prevContinuedSeq <= 1 {
		return nil
	}
	q := Query{PartitionKey: h.runID, RowKeyFrom: histKey(h.gen, 1), RowKeyTo: histKey(h.gen, h.prevContinuedSeq)}
	var ops []Op
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("list old generations of run %s: %w", h.runID, err)
		}
		for _, ent := range page.Entities {
			ifMatch := ent.ETag
			if ifMatch == "" {
				ifMatch = ETagAny
			}
			ops = append(ops, Op{Kind: OpDelete, IfMatch: ifMatch, Entity: Entity{PartitionKey: h.runID, RowKey: ent.RowKey}})
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	for len(ops) > 0 {
		k := min(len(ops), maxBatchOps)
		if _, err := e.store.Submit(ctx, ops[:k]); err != nil {
			return fmt.Errorf("delete old generations of run %s: %w", h.runID, err)
		}
		ops = ops[k:]
	}
	return nil
}

var _ continuer = (*continuedAsNew)(nil)
var _ opWriter = (*continuedAsNew)(nil)
