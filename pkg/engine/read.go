package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// GetRun implements Runs.
func (e *Engine) GetRun(ctx context.Context, instanceID string) (Run, error) {
	if !ValidInstanceID(instanceID) {
		return Run{}, ErrRunNotFound
	}
	h, err := e.getHead(ctx, instanceID)
	if err != nil {
		return Run{}, runLookupError(err)
	}
	return e.runOf(ctx, h)
}

// runOf is GetRun's Run of h: toRun, its child runs, and what it waits for (run_activity.go).
func (e *Engine) runOf(ctx context.Context, h *head) (Run, error) {
	r, err := e.toRun(ctx, h)
	if err != nil {
		return r, err
	}
	activity(&r, h, e.clock())
	if h.children == 0 {
		return r, nil
	}
	return e.withChildren(ctx, h, r)
}

// toRun converts h into a Run, reading its input and, once finished, its output.
func (e *Engine) toRun(ctx context.Context, h *head) (Run, error) {
	r := h.run()
	in, err := e.readSpilled(ctx, h.inputJSON, h.inputRef)
	if err != nil {
		return Run{}, fmt.Errorf("read input of run %s: %w", h.runID, err)
	}
	if err := json.Unmarshal([]byte(in), &r.Input); err != nil {
		return Run{}, fmt.Errorf("decode input of run %s: %w", h.runID, err)
	}
	if h.status.Finished() {
		out, err := e.readSpilled(ctx, h.outputJSON, h.outputRef)
		if err != nil {
			return Run{}, fmt.Errorf("read output of run %s: %w", h.runID, err)
		}
		if out != "" {
			r.Output = json.RawMessage(out)
		}
	}
	return r, nil
}

// run converts a head whose spilled values are inline (a fresh start) into a Run.
func (h *head) run() Run {
	r := Run{
		InstanceID: h.runID, RuntimeStatus: h.status, GraphName: h.graph, GraphVersion: h.version, GraphHash: h.hash, Group: h.group,
		CreatedAt: h.created, UpdatedAt: h.updated, Output: json.RawMessage("null"), ParentInstanceID: h.parent,
		SearchKeys: decodeSearchKeys(h.searchKeys),
		Generation: h.continued, Step: h.step,
	}
	if h.awaitVersion && h.active() {
		r.CustomStatus = json.RawMessage(versionStatus(h))
	} else if h.status != StatusPending && h.custom != "" {
		r.CustomStatus = json.RawMessage(h.custom)
	} else {
		r.CustomStatus = json.RawMessage("null")
	}
	return r
}

// History implements Runs: it pages through the current run's history, oldest first: the
// rows of its current generation (continue.go; GenerationHistory reads the one before). limit
// is the page size (default 100, at most 1000).
func (e *Engine) History(ctx context.Context, instanceID, continuationToken string, limit int) (HistoryList, error) {
	if !ValidInstanceID(instanceID) {
		return HistoryList{}, ErrRunNotFound
	}
	h, err := e.getHead(ctx, instanceID)
	if err != nil {
		return HistoryList{}, runLookupError(err)
	}
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxPageSize)
	_, to := genRange('h', h.gen)
	from := histKey(h.gen, h.generationStart()) // the current generation's first row (continue.go)
	page, err := e.store.Query(ctx, Query{PartitionKey: instanceID, RowKeyFrom: from, RowKeyTo: to, Limit: limit, Continuation: continuationToken})
	if err != nil {
		return HistoryList{}, fmt.Errorf("query history run=%s: %w", instanceID, err)
	}
	out := HistoryList{Events: make([]HistoryEvent, 0, len(page.Entities)), ContinuationToken: page.Continuation}
	for _, ent := range page.Entities {
		ev, err := e.historyEvent(ctx, ent)
		if err != nil {
			return HistoryList{}, err
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}

// historyEvent decodes a history row, reading its data from the payload store when it spilled.
func (e *Engine) historyEvent(ctx context.Context, ent Entity) (HistoryEvent, error) {
	p := ent.Properties
	data, err := e.readSpilled(ctx, str(p, pData), str(p, pData+refSuffix))
	if err != nil {
		return HistoryEvent{}, fmt.Errorf("read history run=%s row=%s: %w", ent.PartitionKey, ent.RowKey, err)
	}
	ev := HistoryEvent{
		Sequence: parseSeq(ent.RowKey), Type: str(p, pType), Name: str(p, pName), Node: str(p, pHistNode),
	}
	if ev.Type != HistoryEventReceived && ev.Type != HistoryCustom { // those carry names of the user's
		ev.Name = historyStepName(ev.Name)
	}
	ev.Timestamp, _ = p[pTime].(time.Time)
	if data != "" {
		ev.Data = json.RawMessage(data)
	}
	return ev, nil
}

// historyStepName is the user-facing name of a step kind in history rows: the name the
// failure messages use ("execute_node failed: ...") — orchestrator, execute_node,
// resolve_route, apply_event — for the internal OrchestratorName, ExecuteNodeName,
// ResolveRouteName and ApplyEventName, which stay in logs and storage. Other names are
// returned as they are.
func historyStepName(internal string) string {
	switch internal {
	case OrchestratorName, ExecuteNodeName, ResolveRouteName, ApplyEventName:
		return strings.TrimPrefix(internal, "fg_")
	}
	return internal
}
