package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Head properties.
const (
	pGen, pStatus, pGraph, pVersion, pHash = "Gen", "Status", "Graph", "Version", "Hash"
	pNode, pStep, pVisits, pAttempt        = "Node", "Step", "Visits", "Attempt"
	pWaiting, pResume, pWaitDeadline       = "Waiting", "Resume", "WaitDeadline"
	pNotBefore, pState, pInput, pCustom    = "NotBefore", "State", "Input", "Custom"
	pOutput, pHistSeq, pInboxSeq, pPending = "Output", "HistSeq", "InboxSeq", "Pending"
	pRunnable, pCreated, pUpdated          = "Runnable", "Created", "Updated"
	pNonce, pRestarts, pWriteID            = "Nonce", "Restarts", "WriteID"
	pHolder, pHoldUntil                    = "Holder", "HoldUntil" // the step's hold (hold.go)
	pWaitTimeout, pTimeoutNode, pTimedOut  = "WaitTimeout", "TimeoutNode", "TimedOut"
	pGroup                                 = "Group" // written only for a grouped run
	pOwner                                 = "Owner" // written only for a run with an owner (owner.go)
	refSuffix                              = "Ref"
)

// head is the decoded run head row.
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
	attempt              int64 // failed attempts of the current step (retry policy)
	waiting, resume      string
	waitDeadline         int64  // unix nanos, 0: none
	waitTimeout          int64  // the wait's timeout in nanoseconds, 0: none
	timeoutNode          string // where the wait continues when it times out; "": the policy's
	timedOut             string // the event whose wait timed out and led to node; "" otherwise
	notBefore            int64  // unix nanos, 0: none (retry back-off, sleep)
	failure              string // the durable.NodeFailure that routed the run to node, as JSON; "" otherwise (nodepolicy.go)

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
	indexShards                int64 // shard count of its index rows; 0: the legacy partitions
	created, updated           time.Time
	trace                      string // the run's trace context (Observer's TraceCarrier), or ""

	// restarts counts the starts of the current step that its worker did not survive: holds
	// found unreleased past their lease (hold.go), cleared by every commit (see the kill limit
	// in workitem.go).
	restarts int64

	// An open fan-out (branch.go): its region of history starts at branchBase (0: none) and
	// holds branchCount branches; branchSpec is the sequence of the route_resolved row that
	// lists them. Written only while a run fans out.
	branchBase, branchCount, branchSpec int64
	// branchRows caches the region's completion rows read by this handling (not stored).
	branchRows []Entity
	// holder names the start that holds the current step (a redelivered start writes it
	// before user code runs), holdUntil the end of its lease in unix nanos; "" and 0 when
	// nobody holds it. Every commit clears them; a start that ends without a commit releases
	// them.
	holder    string
	holdUntil int64
	// Child runs (child.go): the parent of a child run (its id and nonce), the children a
	// run started, and the child whose completion led to node ("" otherwise).
	parent, parentNonce string
	children            int64
	childDone           string
	// stamp is the Timestamp the store set on the row's last write (zero: not known).
	stamp time.Time
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
	case pOwner:
		h.owner, _ = v.(string)
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
	case pHolder:
		h.holder, _ = v.(string)
	case pHoldUntil:
		h.holdUntil = asInt64(v)
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
	case pFailure:
		h.failure, _ = v.(string)
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
	case pBranchBase:
		h.branchBase = asInt64(v)
	case pBranchCount:
		h.branchCount = asInt64(v)
	case pBranchSpec:
		h.branchSpec = asInt64(v)
	case pCreated:
		h.created, _ = v.(time.Time)
	case pUpdated:
		h.updated, _ = v.(time.Time)
	case pParent, pParentNonce, pChildren, pChildDone:
		h.setChildProp(name, v)
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

// mutableProps sets in p the properties a step rewrites (merged into the head row).
func (h *head) mutableProps(p map[string]any) {
	p[pStatus], p[pNode], p[pStep], p[pVisits], p[pAttempt] = string(h.status), h.node, h.step, h.visits, h.attempt
	p[pWaiting], p[pResume], p[pWaitDeadline], p[pNotBefore] = h.waiting, h.resume, h.waitDeadline, h.notBefore
	p[pState], p[pState+refSuffix], p[pCustom] = h.stateJSON, h.stateRef, h.custom
	p[pOutput], p[pOutput+refSuffix] = h.outputJSON, h.outputRef
	p[pHistSeq], p[pInboxSeq], p[pPending], p[pRunnable] = h.histSeq, h.inboxSeq, h.pending, h.runnable
	p[pUpdated], p[pWriteID], p[pAwaitVersion], p[pRestarts] = h.updated, h.writeID, false, h.restarts
	p[pWaitTimeout], p[pTimeoutNode], p[pTimedOut] = h.waitTimeout, h.timeoutNode, h.timedOut
	p[pFailure] = h.failure
	p[pHolder], p[pHoldUntil] = h.holder, h.holdUntil
}

// changedProps returns the properties of h that differ from base, the stored head it was
// built from (merged into the head row, conditioned on base's ETag, so what the row holds
// afterwards equals mutableProps of h). WriteID and Updated are always written: they stamp
// the write (the ambiguity rule, commit.go).
func (h *head) changedProps(base *head) map[string]any {
	p := make(map[string]any, 8) // a step changes about 8; a map of 8 is one group
	p[pWriteID], p[pUpdated] = h.writeID, h.updated
	setStr := func(k, v, old string) {
		if v != old {
			p[k] = v
		}
	}
	setInt := func(k string, v, old int64) {
		if v != old {
			p[k] = v
		}
	}
	setStr(pStatus, string(h.status), string(base.status))
	setStr(pNode, h.node, base.node)
	setInt(pStep, h.step, base.step)
	setInt(pVisits, h.visits, base.visits)
	setInt(pAttempt, h.attempt, base.attempt)
	setStr(pWaiting, h.waiting, base.waiting)
	setStr(pResume, h.resume, base.resume)
	setInt(pWaitDeadline, h.waitDeadline, base.waitDeadline)
	setInt(pNotBefore, h.notBefore, base.notBefore)
	setStr(pState, h.stateJSON, base.stateJSON)
	setStr(pState+refSuffix, h.stateRef, base.stateRef)
	setStr(pCustom, h.custom, base.custom)
	setStr(pOutput, h.outputJSON, base.outputJSON)
	setStr(pOutput+refSuffix, h.outputRef, base.outputRef)
	setInt(pHistSeq, h.histSeq, base.histSeq)
	setInt(pInboxSeq, h.inboxSeq, base.inboxSeq)
	setInt(pPending, h.pending, base.pending)
	if h.runnable != base.runnable {
		p[pRunnable] = h.runnable
	}
	if h.awaitVersion != base.awaitVersion {
		p[pAwaitVersion] = h.awaitVersion
	}
	setInt(pRestarts, h.restarts, base.restarts)
	setStr(pHolder, h.holder, base.holder)
	setInt(pHoldUntil, h.holdUntil, base.holdUntil)
	setInt(pWaitTimeout, h.waitTimeout, base.waitTimeout)
	setStr(pTimeoutNode, h.timeoutNode, base.timeoutNode)
	setStr(pTimedOut, h.timedOut, base.timedOut)
	setStr(pFailure, h.failure, base.failure)
	setInt(pBranchBase, h.branchBase, base.branchBase)
	setInt(pBranchCount, h.branchCount, base.branchCount)
	setInt(pBranchSpec, h.branchSpec, base.branchSpec)
	h.childChanges(base, p)
	return p
}

// allProps returns every head property (insert or replace at start).
func (h *head) allProps() map[string]any {
	p := make(map[string]any, 38) // sized once: every head property
	h.mutableProps(p)
	p[pGen], p[pNonce] = h.gen, h.nonce
	p[pGraph], p[pVersion], p[pHash] = h.graph, h.version, h.hash
	p[pInput], p[pInput+refSuffix] = h.inputJSON, h.inputRef
	p[pCreated] = h.created
	if h.indexShards > 0 {
		p[pIndexShards] = h.indexShards
	}
	if h.trace != "" {
		p[pTrace] = h.trace
	}
	if h.group != "" {
		p[pGroup] = h.group
	}
	if h.owner != "" {
		p[pOwner] = h.owner
	}
	h.childProps(p)
	return p
}

// absorb copies back what spilling changed in the written properties.
// Properties the write leaves out (unchanged) are left as they are.
func (h *head) absorb(props map[string]any) {
	for _, f := range [...]struct {
		name     string
		val, ref *string
	}{{pState, &h.stateJSON, &h.stateRef}, {pOutput, &h.outputJSON, &h.outputRef}, {pInput, &h.inputJSON, &h.inputRef}} {
		if v, ok := props[f.name].(string); ok {
			*f.val = v
		}
		if v, ok := props[f.name+refSuffix].(string); ok {
			*f.ref = v
		}
	}
}
