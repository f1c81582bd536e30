package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// ErrInvalidRunInput reports a start whose input or metadata is truthy but not a JSON object.
var ErrInvalidRunInput = errors.New("engine: run input and metadata must be JSON objects")

// normalizeObject applies the start rules to input and metadata: a falsy value (absent,
// null, false, 0, "", [], {}) becomes {}; any other value must be a JSON object.
func normalizeObject(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(raw) {
		return nil, ErrInvalidRunInput
	}
	if raw[0] == '{' {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, ErrInvalidRunInput
		}
		return buf.Bytes(), nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, ErrInvalidRunInput
	}
	switch x := v.(type) {
	case nil:
		return json.RawMessage("{}"), nil
	case bool:
		if !x {
			return json.RawMessage("{}"), nil
		}
	case float64:
		if x == 0 {
			return json.RawMessage("{}"), nil
		}
	case string:
		if x == "" {
			return json.RawMessage("{}"), nil
		}
	case []any:
		if len(x) == 0 {
			return json.RawMessage("{}"), nil
		}
	}
	return nil, ErrInvalidRunInput
}

// StartRun implements Runs. It pins the run to the latest registration of the graph,
// validates the input against the graph's state model (when the graph can: a
// graphrun.StateChecker), writes its head (Pending) and run_started row in one batch and
// dispatches its first step. A finished run with the same id is replaced atomically (a new
// generation; its old rows are then deleted). A due row written before the head lets Sweep
// dispatch the run should the enqueue fail. A head batch whose answer is ambiguous (a lost
// reply the SDK retried into a 409 with itself) is settled by reading the head: the run's
// nonce says it is this start's. With Options.ReceiveOnStart the start then receives one work
// item itself and handles it in the background (start_receive.go). The batch also inserts the
// start's claim (fence.go): a start whose head batch fails and whose claim a reader has fenced (the repair pass or a listing
// settled it as never stored) stops without writing again and answers ErrConflict: nothing is
// stored, the client retries. Errors: the registry's unknown
// graph error (ErrUnknownGraph), ErrInvalidInstanceID, ErrInvalidGroup, ErrInvalidGraphName,
// ErrInvalidRunInput, a *durable.StateErrors (ErrInvalidState) for an invalid initial state,
// a *SearchKeyError (ErrInvalidSearchKey) for search keys it cannot index, *RunExistsError,
// ErrConflict.
func (e *Engine) StartRun(ctx context.Context, req StartRunRequest) (Run, error) {
	return e.startRun(ctx, req, nil)
}

// startRun is StartRun; link, for the start of a child run (child.go), ties the run to its
// parent and makes the start insert-only: a head that holds the id already is never replaced
// (existingChild).
func (e *Engine) startRun(ctx context.Context, req StartRunRequest, link *childLink) (Run, error) {
	g, err := e.reg.Latest(req.GraphName)
	if err != nil {
		return Run{}, err
	}
	id := req.InstanceID
	if id == "" {
		id = uuid.NewString()
	} else if !ValidInstanceID(id) {
		return Run{}, ErrInvalidInstanceID
	}
	if c, ok := e.store.(PartitionKeyChecker); ok && c.CheckPartitionKey(id) != nil {
		return Run{}, ErrInvalidInstanceID
	}
	if err := e.checkGroup(req.Group); err != nil {
		return Run{}, err
	}
	input, err := normalizeObject(req.Input)
	if err != nil {
		return Run{}, err
	}
	meta, err := normalizeObject(req.Metadata)
	if err != nil {
		return Run{}, err
	}
	if c, ok := graphrun.Of(g).(graphrun.StateChecker); ok {
		if err := c.CheckState(input); err != nil {
			return Run{}, err
		}
	}
	m := g.Manifest()
	if !ValidGraphName(m.GraphName) {
		return Run{}, fmt.Errorf("start run of graph %q: %w", m.GraphName, ErrInvalidGraphName)
	}
	keys, err := runSearchKeys(m.SearchKeys, input, req.SearchKeys)
	if err != nil {
		return Run{}, err
	}
	now := e.clock()
	h := &head{
		runID: id, gen: 1, nonce: newNonce(), writeID: newWriteID(), status: StatusPending, graph: m.GraphName, version: m.Version, hash: m.GraphHash,
		node: m.Entrypoint, stateJSON: string(input), stateVal: input,
		inputJSON: jsonObject("graph_name", jstr(m.GraphName), "graph_hash", jstr(m.GraphHash),
			"initial_state", string(input), "current_node", "null", "metadata", string(meta)),
		histSeq: 1, runnable: true, created: now, updated: now, indexShards: indexShards, group: req.Group,
		owner: metadataOwner(meta),
	}
	h.searchKeys = searchKeysJSON(keys)
	link.tie(h)
	h.trace = e.observeRunStarted(ctx, h)
	due, err := e.writeDue(ctx, h, dueStart)
	if err != nil {
		return Run{}, fmt.Errorf("start run %s: %w", id, err)
	}
	var sp spills
	spilled := false // sp stored a payload under the run's nonce
	defer func() { e.release(ctx, &sp, nil) }()
	// abandon removes what a start that stored no head left: its index rows, its payloads
	// (the run's nonce is this start's alone) and its due row — kept when the payloads could
	// not be deleted, for the repair pass to fence the head and delete them.
	abandon := func() {
		e.unindex(ctx, h.indexRef(), "a failed start")
		if spilled {
			sp.keep()
			if _, err := e.payloads.DeletePrefix(context.WithoutCancel(ctx), payloadPrefix(id, h.nonce)); err != nil {
				e.log.Warn("start run: delete the payloads of a failed start; left to the repair pass", "run_id", id, "error", err.Error())
				return
			}
		}
		e.clearDue(ctx, due)
	}
	var (
		old      *head  // the finished run the head replaces (nil: it is inserted)
		oldNonce string // the replaced run's nonce the due row names
	)
	for attempt := 0; ; attempt++ {
		if attempt == maxHeadRetries {
			abandon()
			return Run{}, fmt.Errorf("start run %s: head keeps changing: %w", id, ErrConflict)
		}
		headOp := Op{Kind: OpInsert}
		if old != nil {
			headOp = Op{Kind: OpReplace, IfMatch: old.etag}
		}
		headOp.Entity = Entity{PartitionKey: id, RowKey: headRowKey, Properties: h.allProps()}
		ops := historyOps(append(make([]Op, 0, 3), headOp), id, h.gen, 0, 0, now, h.writeID, []histRow{{
			typ: HistoryRunStarted, name: OrchestratorName, node: m.Entrypoint, data: h.inputJSON,
		}})
		ops = append(ops, claimOp(id, h.nonce, h.writeID)) // a reader's fence makes it fail (fence.go)
		if err := e.spill(ctx, id, h.nonce, ops, &sp); err != nil {
			abandon()
			return Run{}, err
		}
		spilled = spilled || len(sp.byValue) > 0
		if err := e.indexInsert(ctx, h); err != nil {
			abandon()
			return Run{}, fmt.Errorf("start run %s: %w", id, err)
		}
		etags, err := e.store.Submit(ctx, ops)
		if err == nil {
			e.release(ctx, &sp, ops)
			h.absorb(ops[0].Entity.Properties)
			h.etag = etags[0]
			break
		}
		if refused(err) {
			abandon()
			return Run{}, fmt.Errorf("start run %s: %w", id, err)
		}
		// Unknown outcome (a conflict included): the head says whose start is stored.
		cur, gerr := e.getHead(ctx, id)
		if gerr == nil && cur.nonce == h.nonce {
			e.log.Info("start landed although its answer was an error", "run_id", id, "error", err.Error())
			e.release(ctx, &sp, ops)
			h.absorb(ops[0].Entity.Properties)
			h.etag = cur.etag
			break
		}
		if gerr != nil && !errors.Is(gerr, ErrNotFound) {
			// Still unknown: keep its payloads, and its due and index rows for Sweep, which
			// fences the start and removes them if it never landed.
			sp.keep()
			return Run{}, fmt.Errorf("start run %s: %w (outcome unknown: %v)", id, err, gerr)
		}
		if !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) {
			// Not stored, as far as a read can tell: the caller retries. Its payloads, due and
			// index rows stay should the write land all the same; Sweep fences the start and
			// removes them if not.
			sp.keep()
			return Run{}, fmt.Errorf("start run %s: %w", id, err)
		}
		// Refused. Before writing again: a reader may have settled this start as never
		// stored (its claim fenced): then its rows are going, and it stops.
		if fenced, ferr := e.startFenced(ctx, id, h.nonce); ferr != nil {
			sp.keep()
			return Run{}, fmt.Errorf("start run %s: %w (outcome unknown: %v)", id, err, ferr)
		} else if fenced {
			abandon()
			e.log.Warn("start run: settled as not stored by the repair pass or a listing while its head write was late; answered retry", "run_id", id)
			return Run{}, fmt.Errorf("start run %s: its head write was late and was settled as not stored: %w", id, ErrConflict)
		}
		switch {
		case link != nil && gerr == nil:
			return e.existingChild(ctx, h, cur, link, abandon, due)
		case errors.Is(gerr, ErrNotFound):
			old, h.gen = nil, 1
		case req.NoReplace || !cur.status.Finished():
			abandon()
			return Run{}, &RunExistsError{InstanceID: id, Status: cur.status}
		default:
			old, h.gen = cur, cur.gen+1
			if old.nonce != oldNonce {
				// The due row names the run this start replaces, so that its payloads are
				// deleted even if the clean-up below fails or never runs (repair.go).
				if err := e.dueReplacing(ctx, due, old.nonce); err != nil {
					abandon()
					return Run{}, fmt.Errorf("start run %s: %w", id, err)
				}
				oldNonce = old.nonce
			}
		}
	}
	e.log.Info("run started", "run_id", id, "graph", m.GraphName, "graph_hash", m.GraphHash, "orchestrator", OrchestratorName)
	keepDue := false
	if old != nil {
		if err := e.cleanupGenerations(ctx, h, old.nonce); err != nil {
			// The due row names the replaced run: the repair pass deletes its payloads.
			keepDue = true
			e.dueStored(ctx, due)
			e.log.Warn("start run: clean up the replaced run; its payloads are left to the repair pass", "run_id", id, "error", err.Error())
		}
		if err := e.indexDeleteExcept(ctx, old.indexRef(), h.indexRef()); err != nil {
			e.log.Warn("start run: remove index rows of the replaced run", "run_id", id, "error", err.Error())
		}
	}
	run := h.run()
	if err := e.dispatch(ctx, h, 0); err != nil {
		// The run is stored; its due row makes Sweep dispatch it.
		e.log.Warn("start run: dispatch failed; left to the repair pass", "run_id", id, "error", err.Error())
		return run, nil
	}
	if !keepDue {
		e.clearDue(ctx, due)
	}
	if link == nil {
		e.receiveOnStart() // the first step need not wait for a trigger's back-off (start_receive.go)
	}
	return run, nil
}
