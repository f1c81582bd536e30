package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// History row types (HistoryEvent.Type).
const (
	HistoryRunStarted         = "run_started"
	HistoryNodeCompleted      = "node_completed"
	HistoryRouteResolved      = "route_resolved"
	HistoryWaitStarted        = "wait_started"
	HistoryWaitTimedOut       = "wait_timed_out"
	HistoryEventReceived      = "event_received"
	HistoryEventApplied       = "event_applied"
	HistoryNodeRetryScheduled = "node_retry_scheduled"
	HistoryRunCompleted       = "run_completed"
	HistoryRunFailed          = "run_failed"
	HistoryRunTerminated      = "run_terminated"
)

// History row properties.
const (
	pType, pName, pHistNode, pHistStep, pTime, pData = "Type", "Name", "Node", "Step", "Time", "Data"
	pEvent, pPayload                                 = "Event", "Payload"
)

// histRow is a history row before it gets its sequence number.
type histRow struct {
	typ, name, node string
	data            string // JSON
}

// historyOps appends rows after seq (the head's HistSeq) as inserts.
func historyOps(runID string, gen, seq, step int64, now time.Time, rows []histRow) []Op {
	ops := make([]Op, len(rows))
	for i, r := range rows {
		ops[i] = Op{Kind: OpInsert, Entity: Entity{PartitionKey: runID, RowKey: histKey(gen, seq+int64(i)+1), Properties: map[string]any{
			pType: r.typ, pName: r.name, pHistNode: r.node, pHistStep: step, pTime: now, pData: r.data,
		}}}
	}
	return ops
}

// History implements Runs: it pages through the current run's history, oldest first. limit
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
	from, to := genRange('h', h.gen)
	page, err := e.store.Query(ctx, Query{PartitionKey: instanceID, RowKeyFrom: from, RowKeyTo: to, Limit: limit, Continuation: continuationToken})
	if err != nil {
		return HistoryList{}, fmt.Errorf("query history run=%s: %w", instanceID, err)
	}
	out := HistoryList{Events: make([]HistoryEvent, 0, len(page.Entities)), ContinuationToken: page.Continuation}
	for _, ent := range page.Entities {
		p := ent.Properties
		data, err := e.readSpilled(ctx, str(p, pData), str(p, pData+refSuffix))
		if err != nil {
			return HistoryList{}, fmt.Errorf("read history run=%s row=%s: %w", instanceID, ent.RowKey, err)
		}
		ev := HistoryEvent{
			Sequence: parseSeq(ent.RowKey), Type: str(p, pType), Name: str(p, pName), Node: str(p, pHistNode),
		}
		ev.Timestamp, _ = p[pTime].(time.Time)
		if data != "" {
			ev.Data = json.RawMessage(data)
		}
		out.Events = append(out.Events, ev)
	}
	return out, nil
}

func parseSeq(rk string) int64 {
	var n int64
	if len(rk) > 8 {
		for _, c := range rk[8:] {
			if c < '0' || c > '9' {
				return 0
			}
			n = n*10 + int64(c-'0')
		}
	}
	return n
}
