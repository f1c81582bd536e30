package engine

import (
	"context"
	"fmt"
	"time"
)

// RowReader is an optional capability of a Store: GetRow reads one row as Get does, but
// hands its properties to visit one by one instead of building the map Get returns. The
// engine reads a run's head (34 properties) this way when the store offers it: no map to
// build and look up, on the path of every work item and every status read.
type RowReader interface {
	// GetRow reads the row pk/rk and calls visit with each of its properties, the values Get
	// would return in Entity.Properties; it returns the row's ETag and Timestamp. visit is
	// called before GetRow returns and must not call the store. Errors as Get's.
	GetRow(ctx context.Context, partitionKey, rowKey string, visit func(name string, value any)) (etag string, timestamp time.Time, err error)
}

// getHead reads a run's head. Errors: ErrNotFound (wrapped) for an unknown run.
func (e *Engine) getHead(ctx context.Context, runID string) (*head, error) {
	if r, ok := e.store.(RowReader); ok {
		h := &head{runID: runID}
		etag, _, err := r.GetRow(ctx, runID, headRowKey, h.set)
		if err != nil {
			return nil, fmt.Errorf("read run head %s: %w", runID, err)
		}
		h.etag = etag
		return h.checked()
	}
	ent, err := e.store.Get(ctx, runID, headRowKey)
	if err != nil {
		return nil, fmt.Errorf("read run head %s: %w", runID, err)
	}
	return decodeHead(ent)
}

// decodeHead returns the head stored as e.
func decodeHead(e Entity) (*head, error) {
	h := &head{runID: e.PartitionKey, etag: e.ETag}
	for k, v := range e.Properties {
		h.set(k, v)
	}
	return h.checked()
}

// checked returns h, or an error when it is no head (a bad status or generation).
func (h *head) checked() (*head, error) {
	if !h.status.Valid() || h.gen < 1 {
		return nil, fmt.Errorf("decode run head %s: bad status %q or generation %d", h.runID, h.status, h.gen)
	}
	return h, nil
}

// set sets the field of h that the head property name holds; a value of another type than
// the property's, or an unknown property, is ignored (the field keeps its zero value).
func (h *head) set(name string, v any) {
	switch name {
	case pGen:
		h.gen = asInt64(v)
	case pNonce:
		h.nonce, _ = v.(string)
	case pWriteID:
		h.writeID, _ = v.(string)
	case pStatus:
		s, _ := v.(string)
		h.status = RunStatus(s)
	case pGraph:
		h.graph, _ = v.(string)
	case pVersion:
		h.version, _ = v.(string)
	case pHash:
		h.hash, _ = v.(string)
	case pGroup:
		h.group, _ = v.(string)
	case pNode:
		h.node, _ = v.(string)
	case pStep:
		h.step = asInt64(v)
	case pVisits:
		h.visits = asInt64(v)
	case pAttempt:
		h.attempt = asInt64(v)
	case pRestarts:
		h.restarts = asInt64(v)
	case pWaiting:
		h.waiting, _ = v.(string)
	case pResume:
		h.resume, _ = v.(string)
	case pWaitDeadline:
		h.waitDeadline = asInt64(v)
	case pNotBefore:
		h.notBefore = asInt64(v)
	case pWaitTimeout:
		h.waitTimeout = asInt64(v)
	case pTimeoutNode:
		h.timeoutNode, _ = v.(string)
	case pTimedOut:
		h.timedOut, _ = v.(string)
	case pState:
		h.stateJSON, _ = v.(string)
	case pState + refSuffix:
		h.stateRef, _ = v.(string)
	case pInput:
		h.inputJSON, _ = v.(string)
	case pInput + refSuffix:
		h.inputRef, _ = v.(string)
	case pCustom:
		h.custom, _ = v.(string)
	case pOutput:
		h.outputJSON, _ = v.(string)
	case pOutput + refSuffix:
		h.outputRef, _ = v.(string)
	case pHistSeq:
		h.histSeq = asInt64(v)
	case pInboxSeq:
		h.inboxSeq = asInt64(v)
	case pPending:
		h.pending = asInt64(v)
	case pTrace:
		h.trace, _ = v.(string)
	case pIndexShards:
		h.indexShards = asInt64(v)
	case pRunnable:
		h.runnable, _ = v.(bool)
	case pAwaitVersion:
		h.awaitVersion, _ = v.(bool)
	case pCreated:
		h.created, _ = v.(time.Time)
	case pUpdated:
		h.updated, _ = v.(time.Time)
	}
}

// asInt64 returns an int64 or int32 value as int64, else 0.
func asInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	}
	return 0
}
