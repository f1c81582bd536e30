package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Row layout of a run's partition (PartitionKey = instance id):
//
//	"r"                        the run head: status, graph pin, current node, counters, state
//	"h<gen:6>-<seq:16>"        history rows of generation gen, append-only, in order
//	"i<gen:6>-<seq:16>"        inbox rows (events raised and not yet consumed)
//
// gen counts the runs that have used this instance id: a finished run replaced by a new
// start keeps its old rows under the old generation until they are cleaned up, so the
// replacement itself is one atomic write. A purge forgets the count; the head's random
// Nonce tells runs of one id apart across purges.
//
// Every write to a partition stamps its WriteID (random per write) on the head and on every
// row it inserts, so that a write whose outcome is unknown is recognised when read back
// (ambiguity.go).
const headRowKey = "r"

// Head properties.
const (
	pGen, pStatus, pGraph, pVersion, pHash = "Gen", "Status", "Graph", "Version", "Hash"
	pNode, pStep, pVisits, pAttempt        = "Node", "Step", "Visits", "Attempt"
	pWaiting, pResume, pWaitDeadline       = "Waiting", "Resume", "WaitDeadline"
	pNotBefore, pState, pInput, pCustom    = "NotBefore", "State", "Input", "Custom"
	pOutput, pHistSeq, pInboxSeq, pPending = "Output", "HistSeq", "InboxSeq", "Pending"
	pRunnable, pCreated, pUpdated          = "Runnable", "Created", "Updated"
	pNonce, pRestarts, pWriteID            = "Nonce", "Restarts", "WriteID"
	pWaitTimeout, pTimeoutNode, pTimedOut  = "WaitTimeout", "TimeoutNode", "TimedOut"
	pGroup                                 = "Group" // written only for a grouped run
	refSuffix                              = "Ref"
)

// History and inbox row properties.
const (
	pType, pName, pHistNode, pHistStep, pTime, pData = "Type", "Name", "Node", "Step", "Time", "Data"
	pEvent, pPayload                                 = "Event", "Payload"
	// pWriteID (above) is on history, inbox and idempotency rows too.
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
	node                 string // node of the next visit; while waiting, the node that waited
	step                 int64  // committed steps; a work item names the step it may run
	visits               int64
	attempt              int64 // failed attempts of the current step (retry policy)
	waiting, resume      string
	waitDeadline         int64  // unix nanos, 0: none
	waitTimeout          int64  // the wait's timeout in nanoseconds, 0: none
	timeoutNode          string // where the wait continues when it times out; "": the policy's
	timedOut             string // the event whose wait timed out and led to node; "" otherwise
	notBefore            int64  // unix nanos, 0: none (retry back-off)

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

	// restarts counts the starts of the current step, after its first, that ended in no
	// commit: recorded on a redelivery before user code runs, cleared by every commit (see
	// countStart in workitem.go).
	restarts int64
}

func (h *head) active() bool { return h.status == StatusPending || h.status == StatusRunning }

func (h *head) clone() *head {
	c := *h
	return &c
}

// mutableProps returns the properties a step rewrites (merged into the head row).
func (h *head) mutableProps() map[string]any {
	return map[string]any{
		pStatus: string(h.status), pNode: h.node, pStep: h.step, pVisits: h.visits, pAttempt: h.attempt,
		pWaiting: h.waiting, pResume: h.resume, pWaitDeadline: h.waitDeadline, pNotBefore: h.notBefore,
		pState: h.stateJSON, pState + refSuffix: h.stateRef, pCustom: h.custom,
		pOutput: h.outputJSON, pOutput + refSuffix: h.outputRef,
		pHistSeq: h.histSeq, pInboxSeq: h.inboxSeq, pPending: h.pending, pRunnable: h.runnable,
		pUpdated: h.updated, pWriteID: h.writeID, pAwaitVersion: false, pRestarts: h.restarts,
		pWaitTimeout: h.waitTimeout, pTimeoutNode: h.timeoutNode, pTimedOut: h.timedOut,
	}
}

// changedProps returns the properties of h that differ from base, the stored head it was
// built from (merged into the head row, conditioned on base's ETag, so what the row holds
// afterwards equals mutableProps of h). WriteID and Updated are always written: they stamp
// the write (ambiguity.go).
func (h *head) changedProps(base *head) map[string]any {
	p := make(map[string]any, 12)
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
	setInt(pWaitTimeout, h.waitTimeout, base.waitTimeout)
	setStr(pTimeoutNode, h.timeoutNode, base.timeoutNode)
	setStr(pTimedOut, h.timedOut, base.timedOut)
	return p
}

// allProps returns every head property (insert or replace at start).
func (h *head) allProps() map[string]any {
	p := h.mutableProps()
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

func decodeHead(e Entity) (*head, error) {
	p := e.Properties
	h := &head{
		runID: e.PartitionKey, etag: e.ETag,
		gen: i64(p, pGen), nonce: str(p, pNonce), writeID: str(p, pWriteID), status: RunStatus(str(p, pStatus)),
		graph: str(p, pGraph), version: str(p, pVersion), hash: str(p, pHash), group: str(p, pGroup),
		node: str(p, pNode), step: i64(p, pStep), visits: i64(p, pVisits), attempt: i64(p, pAttempt), restarts: i64(p, pRestarts),
		waiting: str(p, pWaiting), resume: str(p, pResume),
		waitDeadline: i64(p, pWaitDeadline), notBefore: i64(p, pNotBefore),
		waitTimeout: i64(p, pWaitTimeout), timeoutNode: str(p, pTimeoutNode), timedOut: str(p, pTimedOut),
		stateJSON: str(p, pState), stateRef: str(p, pState+refSuffix),
		inputJSON: str(p, pInput), inputRef: str(p, pInput+refSuffix),
		custom: str(p, pCustom), outputJSON: str(p, pOutput), outputRef: str(p, pOutput+refSuffix),
		histSeq: i64(p, pHistSeq), inboxSeq: i64(p, pInboxSeq), pending: i64(p, pPending),
		trace: str(p, pTrace), indexShards: i64(p, pIndexShards),
	}
	h.runnable, _ = p[pRunnable].(bool)
	h.awaitVersion, _ = p[pAwaitVersion].(bool)
	h.created, _ = p[pCreated].(time.Time)
	h.updated, _ = p[pUpdated].(time.Time)
	if !h.status.Valid() || h.gen < 1 {
		return nil, fmt.Errorf("decode run head %s: bad status %q or generation %d", e.PartitionKey, h.status, h.gen)
	}
	return h, nil
}

func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

func i64(p map[string]any, k string) int64 {
	switch v := p[k].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	}
	return 0
}

// maxHeadRetries bounds the read-modify-write loops of RaiseEvent, CancelRun and StartRun
// against concurrent commits.
const maxHeadRetries = 32

// getHead reads a run's head. Errors: ErrNotFound (wrapped) for an unknown run.
func (e *Engine) getHead(ctx context.Context, runID string) (*head, error) {
	ent, err := e.store.Get(ctx, runID, headRowKey)
	if err != nil {
		return nil, fmt.Errorf("read run head %s: %w", runID, err)
	}
	return decodeHead(ent)
}

// loadState returns the head's state, reading the payload store when it was spilled.
func (e *Engine) loadState(ctx context.Context, h *head) (json.RawMessage, error) {
	if h.stateVal != nil {
		return h.stateVal, nil
	}
	v, err := e.readSpilled(ctx, h.stateJSON, h.stateRef)
	if err != nil {
		return nil, fmt.Errorf("load state run=%s: %w", h.runID, err)
	}
	h.stateVal = json.RawMessage(v)
	return h.stateVal, nil
}

// newNonce returns a random run nonce (12 hex digits).
func newNonce() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// histRow is a history row before it gets its sequence number.
type histRow struct {
	// typ and name are the string constants of runs.go, boxed where they are named (free).
	typ, name any
	node      string
	data      string // JSON
}

// historyOps appends rows after seq (the head's HistSeq) as inserts, stamped with the id of
// the write that inserts them.
func historyOps(runID string, gen, seq, step int64, now time.Time, writeID string, rows []histRow) []Op {
	ops := make([]Op, len(rows))
	// The rows share the boxed values they have in common (values in a map are never
	// modified in place, only replaced).
	var stepV, nowV, writeV any = step, now, writeID
	for i, r := range rows {
		ops[i] = Op{Kind: OpInsert, Entity: Entity{PartitionKey: runID, RowKey: histKey(gen, seq+int64(i)+1), Properties: map[string]any{
			pType: r.typ, pName: r.name, pHistNode: r.node, pHistStep: stepV, pTime: nowV, pData: r.data, pWriteID: writeV,
		}}}
	}
	return ops
}

// findEvent returns the oldest inbox row of h's generation carrying name.
func (e *Engine) findEvent(ctx context.Context, h *head, name string) (Entity, bool, error) {
	if h.pending <= 0 {
		return Entity{}, false, nil
	}
	from, to := genRange('i', h.gen)
	q := Query{PartitionKey: h.runID, RowKeyFrom: from, RowKeyTo: to, Where: []Cond{{Property: pEvent, Op: CondEq, Value: name}}, Limit: 1}
	for {
		page, err := e.store.Query(ctx, q)
		if err != nil {
			return Entity{}, false, fmt.Errorf("read inbox run=%s: %w", h.runID, err)
		}
		if len(page.Entities) > 0 {
			return page.Entities[0], true, nil
		}
		if page.Continuation == "" {
			return Entity{}, false, nil
		}
		q.Continuation = page.Continuation
	}
}

// Row keys.

// padInt appends n zero-padded to width digits.
func padInt(dst []byte, n int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// seqKey is the row key "<prefix><gen:6>-<seq:16>".
func seqKey(prefix byte, gen, seq int64) string {
	b := make([]byte, 0, 24)
	b = append(b, prefix)
	b = padInt(b, gen, 6)
	b = append(b, '-')
	b = padInt(b, seq, 16)
	return string(b)
}

func histKey(gen, seq int64) string  { return seqKey('h', gen, seq) }
func inboxKey(gen, seq int64) string { return seqKey('i', gen, seq) }

// genRange returns the row key range [from, to) of one generation's rows with prefix.
func genRange(prefix byte, gen int64) (string, string) {
	b := padInt([]byte{prefix}, gen, 6)
	return string(b) + "-", string(b) + "."
}

// keyGen parses the generation of a history or inbox row key (0 if malformed).
func keyGen(rk string) int64 {
	if len(rk) < 8 {
		return 0
	}
	n, err := strconv.ParseInt(rk[1:7], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// parseSeq parses the sequence number of a history or inbox row key (0 if malformed).
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
