package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
	"unsafe"
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

	headWait   // an event the run waits for, and its timeout (head_wait.go)
	headRetry  // a failed step's retry and failure route (head_retry.go)
	headFanOut // an open fan-out (head_fanout.go)
	headChild  // child runs (head_child.go)
	headHold   // the hold of the current step (head_hold.go)

	// stamp is the Timestamp the store set on the row's last write (zero: not known).
	stamp time.Time
}

// headCoreProps declares the properties of the head's core.
var headCoreProps = []headProp{
	intProp(pGen, propStarted, unsafe.Offsetof(head{}.gen)),
	strProp(pNonce, propStarted, unsafe.Offsetof(head{}.nonce)),
	strProp(pWriteID, propStepped|propStamped, unsafe.Offsetof(head{}.writeID)),
	strProp(pStatus, propStep, unsafe.Offsetof(head{}.status)),
	strProp(pGraph, propStarted, unsafe.Offsetof(head{}.graph)),
	strProp(pVersion, propStarted, unsafe.Offsetof(head{}.version)),
	strProp(pHash, propStarted, unsafe.Offsetof(head{}.hash)),
	strProp(pGroup, propStartedIfSet, unsafe.Offsetof(head{}.group)),
	strProp(pOwner, propStartedIfSet, unsafe.Offsetof(head{}.owner)),
	strProp(pNode, propStep, unsafe.Offsetof(head{}.node)),
	intProp(pStep, propStep, unsafe.Offsetof(head{}.step)),
	intProp(pVisits, propStep, unsafe.Offsetof(head{}.visits)),
	payloadProp(pState, propStep, unsafe.Offsetof(head{}.stateJSON), unsafe.Offsetof(head{}.stateRef)),
	payloadProp(pInput, propStarted, unsafe.Offsetof(head{}.inputJSON), unsafe.Offsetof(head{}.inputRef)),
	strProp(pCustom, propStep, unsafe.Offsetof(head{}.custom)),
	payloadProp(pOutput, propStep, unsafe.Offsetof(head{}.outputJSON), unsafe.Offsetof(head{}.outputRef)),
	intProp(pHistSeq, propStep, unsafe.Offsetof(head{}.histSeq)),
	intProp(pInboxSeq, propStep, unsafe.Offsetof(head{}.inboxSeq)),
	intProp(pPending, propStep, unsafe.Offsetof(head{}.pending)),
	boolProp(pRunnable, propStep, unsafe.Offsetof(head{}.runnable)),
	// A step clears the mark (a run that steps is no longer parked); only a parked run's
	// merge sets it (workitem.go).
	boolProp(pAwaitVersion, propZeroed|propCompared, unsafe.Offsetof(head{}.awaitVersion)),
	intProp(pIndexShards, propStartedIfSet, unsafe.Offsetof(head{}.indexShards)),
	timeProp(pCreated, propStarted, unsafe.Offsetof(head{}.created)),
	timeProp(pUpdated, propStepped|propStamped, unsafe.Offsetof(head{}.updated)),
	strProp(pTrace, propStartedIfSet, unsafe.Offsetof(head{}.trace)),
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
