package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Properties of the head's core (the parts' are in their files).
const (
	pGen, pStatus, pGraph, pVersion, pHash = "Gen", "Status", "Graph", "Version", "Hash"
	pNode, pStep, pVisits                  = "Node", "Step", "Visits"
	pState, pInput, pCustom, pOutput       = "State", "Input", "Custom", "Output"
	pHistSeq, pInboxSeq, pPending          = "HistSeq", "InboxSeq", "Pending"
	pRunnable, pCreated, pUpdated          = "Runnable", "Created", "Updated"
	pNonce, pWriteID                       = "Nonce", "WriteID"
	pGroup                                 = "Group" // written only for a grouped run
	pOwner                                 = "Owner" // written only for a run with an owner (owner.go)
	// pTrace is the head property keeping the run's trace context.
	pTrace = "Trace"
	// pIndexShards is the head property naming the shard count of the run's index rows
	// (indexShards, set by every start).
	pIndexShards = "IndexShards"
	// pAwaitVersion is the head property that marks a run waiting for its graph version.
	pAwaitVersion = "AwaitVersion"
	refSuffix     = "Ref"
)

// head is the decoded run head row: its core fields and, embedded, the parts of the head
// that features keep (each declares its properties in its own file).
type head struct {
	runID string
	etag  string

	gen int64
	// nonce is random per run (per start): a run that reuses the id of a purged one starts
	// again at generation 1, and the nonce keeps its work items, idempotency keys and
	// payloads apart from the purged run's.
	nonce string
	// writeID is the id of the last write to the head (a start, step commit, event or
	// cancel): its witness while nobody has written after it.
	writeID              string
	status               RunStatus
	graph, version, hash string
	group                string // StartRunRequest.Group, "" for none (group.go)
	owner                string // the metadata's owner the index keeps, "" for none (owner.go)
	node                 string // node of the next visit; while waiting, the node that waited
	step                 int64  // committed steps; a work item names the step it may run
	visits               int64

	// state is the stored State property (inline JSON) or "" with stateRef set.
	stateJSON, stateRef string
	// stateVal caches the loaded state.
	stateVal json.RawMessage

	inputJSON, inputRef   string
	custom                string // JSON or "" (null)
	outputJSON, outputRef string

	histSeq, inboxSeq, pending int64
	runnable                   bool
	awaitVersion               bool  // parked: its graph version is not registered (version.go)
	indexShards                int64 // shard count of its index rows (set by every start)
	created, updated           time.Time
	trace                      string // the run's trace context (Observer's TraceCarrier), or ""

	headWait     // an event the run waits for, and its timeout (head_wait.go)
	headRetry    // a failed step's retry and failure route (head_retry.go)
	headFanOut   // an open fan-out (head_fanout.go)
	headChild    // child runs (head_child.go)
	headHold     // the hold of the current step (head_hold.go)
	headKeys     // the run's search keys (searchkeys.go)
	headContinue // the run's generation: its continues as new (head_continue.go)
	headRewind   // a rewound step's marks (head_rewind.go)

	// stamp is the Timestamp the store set on the row's last write (zero: not known).
	stamp time.Time
}

// headCoreProps declares the properties of the head's core.
var headCoreProps = []headProp{
	intProp(pGen, propStarted, func(h *head) *int64 { return &h.gen }),
	strProp(pNonce, propStarted, func(h *head) *string { return &h.nonce }),
	strProp(pWriteID, propStepped|propStamped, func(h *head) *string { return &h.writeID }),
	strProp(pStatus, propStep, func(h *head) *string { return (*string)(&h.status) }), // a RunStatus is a string
	strProp(pGraph, propStarted, func(h *head) *string { return &h.graph }),
	strProp(pVersion, propStarted, func(h *head) *string { return &h.version }),
	strProp(pHash, propStarted, func(h *head) *string { return &h.hash }),
	strProp(pGroup, propStartedIfSet, func(h *head) *string { return &h.group }),
	strProp(pOwner, propStartedIfSet, func(h *head) *string { return &h.owner }),
	strProp(pNode, propStep, func(h *head) *string { return &h.node }),
	intProp(pStep, propStep, func(h *head) *int64 { return &h.step }),
	intProp(pVisits, propStep, func(h *head) *int64 { return &h.visits }),
	payloadProp(pState, propStep,
		func(h *head) *string { return &h.stateJSON }, func(h *head) *string { return &h.stateRef }),
	payloadProp(pInput, propStarted,
		func(h *head) *string { return &h.inputJSON }, func(h *head) *string { return &h.inputRef }),
	strProp(pCustom, propStep, func(h *head) *string { return &h.custom }),
	payloadProp(pOutput, propStep,
		func(h *head) *string { return &h.outputJSON }, func(h *head) *string { return &h.outputRef }),
	intProp(pHistSeq, propStep, func(h *head) *int64 { return &h.histSeq }),
	intProp(pInboxSeq, propStep, func(h *head) *int64 { return &h.inboxSeq }),
	intProp(pPending, propStep, func(h *head) *int64 { return &h.pending }),
	boolProp(pRunnable, propStep, func(h *head) *bool { return &h.runnable }),
	// A step clears the mark (a run that steps is no longer parked); only a parked run's
	// merge sets it (workitem.go).
	boolProp(pAwaitVersion, propZeroed|propCompared, func(h *head) *bool { return &h.awaitVersion }),
	intProp(pIndexShards, propStartedIfSet, func(h *head) *int64 { return &h.indexShards }),
	timeProp(pCreated, propStarted, func(h *head) *time.Time { return &h.created }),
	timeProp(pUpdated, propStepped|propStamped, func(h *head) *time.Time { return &h.updated }),
	strProp(pTrace, propStartedIfSet, func(h *head) *string { return &h.trace }),
}

func (h *head) active() bool { return h.status == StatusPending || h.status == StatusRunning }

func (h *head) clone() *head {
	c := *h
	return &c
}

// newNonce returns a random run nonce (12 hex digits).
func newNonce() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxHeadRetries bounds the read-modify-write loops of RaiseEvent, CancelRun and StartRun
// against concurrent commits.
const maxHeadRetries = 32

// getHead reads a run's head. Errors: ErrNotFound (wrapped) for an unknown run.
func (e *Engine) getHead(ctx context.Context, runID string) (*head, error) {
	if r, ok := e.store.(RowReader); ok {
		h := &head{runID: runID}
		etag, stamp, err := r.GetRow(ctx, runID, headRowKey, h.set)
		if err != nil {
			return nil, fmt.Errorf("read run head %s: %w", runID, err)
		}
		h.etag, h.stamp = etag, stamp
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
	h := &head{runID: e.PartitionKey, etag: e.ETag, stamp: e.Timestamp}
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
