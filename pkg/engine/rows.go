package engine

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Row layout of a run's partition (PartitionKey = instance id):
//
//	"r"                        the run head: status, graph pin, current node, counters, state
//	"h<gen:6>-<seq:16>"        history rows of generation gen, append-only, in order
//	"i<gen:6>-<seq:16>"        inbox rows (events raised and not yet consumed)
//	"j<gen:6>-<seq:16>-<nonce>" the fence of an open fan-out's region (branch.go)
//	"k<gen:6>-<seq:16>-<nonce>" a branch's progress: its attempt, back-off and hold
//	                           (branch_progress.go)
//	"l<gen:6>-<step:16>"       the link to a child run started at step (child.go)
//	"n<nonce>"                 the claim of the start with that nonce, written with its head;
//	                           marked Fenced when a reader settled that start (fence.go)
//
// gen counts the runs that have used this instance id: a finished run replaced by a new
// start keeps its old rows under the old generation until they are cleaned up, so the
// replacement itself is one atomic write. A purge forgets the count; the head's random
// Nonce tells runs of one id apart across purges.
//
// A run that continues as new (continue.go) keeps its gen and nonce: the rows of its
// generations share one sequence, and the head records where each of the last two begins.
//
// Every write to a partition stamps its WriteID (random per write) on the head and on every
// row it inserts, so that a write whose outcome is unknown is recognised when read back
// (the ambiguity rule, commit.go).
const headRowKey = "r"

// History and inbox row properties.
const (
	pType, pName, pHistNode, pHistStep, pTime, pData = "Type", "Name", "Node", "Step", "Time", "Data"
	pEvent, pPayload                                 = "Event", "Payload"
	// pWriteID (a head property) is on history, inbox and idempotency rows too.
)

// histRow is a history row before it gets its sequence number.
type histRow struct {
	// typ and name are the string constants of runs.go, boxed where they are named (free).
	typ, name any
	node      string
	data      string // JSON
}

// historyOps appends to ops the rows after seq (the head's HistSeq) as inserts, stamped with
// the id of the write that inserts them.
func historyOps(ops []Op, runID string, gen, seq, step int64, now time.Time, writeID string, rows []histRow) []Op {
	// The rows share the boxed values they have in common (values in a map are never
	// modified in place, only replaced).
	var stepV, nowV, writeV any = step, now, writeID
	var node string
	var nodeV any
	for i, r := range rows {
		if nodeV == nil || r.node != node {
			node, nodeV = r.node, r.node
		}
		ops = append(ops, Op{Kind: OpInsert, Entity: Entity{PartitionKey: runID, RowKey: histKey(gen, seq+int64(i)+1), Properties: map[string]any{
			pType: r.typ, pName: r.name, pHistNode: nodeV, pHistStep: stepV, pTime: nowV, pData: r.data, pWriteID: writeV,
		}}})
	}
	return ops
}

// str returns the string property k of p, or "".
func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

// i64 returns the int64 or int32 property k of p as int64, or 0.
func i64(p map[string]any, k string) int64 {
	switch v := p[k].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	}
	return 0
}

// readSpilled returns an inline value, or the payload behind ref.
func (e *Engine) readSpilled(ctx context.Context, inline, ref string) (string, error) {
	if ref == "" {
		return inline, nil
	}
	data, err := e.payloads.Get(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("read payload %s: %w", ref, err)
	}
	return string(data), nil
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

// RunRow reports whether rowKey names a row of the run whose instance id is the row's
// partition key — its head, history, inbox and event-dedup rows, whose keys begin with a
// lowercase letter — rather than a row the engine keeps about many runs (the run index and
// the repair pass's due rows, whose keys begin with a digit). A store that accounts what
// each run holds (memory.WithBudget) tells them apart by it.
func RunRow(rowKey string) bool { return rowKey != "" && rowKey[0] >= 'a' && rowKey[0] <= 'z' }

// RowRun returns the instance id of the run a row the engine keeps about many runs (not a
// RunRow) is about, so that a store that accounts what each run holds can bill it to that
// run: an index row's (group and owner rows included; its key ends in "_<run id>"), a due
// row's (its Run property, which prop reads from the row). It is "" for the rows about no one
// run (the repair pass's own). The answer is the same for every write of a row, its delete
// included.
func RowRun(rowKey string, prop func(name string) (any, bool)) string {
	if len(rowKey) > indexKeyDigits+1 && rowKey[indexKeyDigits] == '_' {
		return rowKey[indexKeyDigits+1:]
	}
	if prop != nil && rowKey != "" && rowKey[0] >= '0' && rowKey[0] <= '9' {
		if v, ok := prop(pRun); ok {
			if id, ok := v.(string); ok {
				return id
			}
		}
	}
	return ""
}

// indexKeyDigits is the length of an index row key's time part (index.go).
const indexKeyDigits = 19
