package engine

import (
	"bytes"
	"strconv"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// stateRows is how the history rows of a graph that declares reducers
// (durable.ManifestBuilder.Reduce) record its state: as what each step changed (an "update"
// member), not the whole state, so that a conversation's history grows with what it adds and
// not with the square of its length. A nil *stateRows is a graph without reducers: its rows
// carry the whole state ("state"), as they always have. FoldState rebuilds the states.
type stateRows struct {
	// lists are the fields with a reducer, by key as a state writes it (quoted): a list value
	// of theirs is recorded as the delta {"keep": k, "add": [...]}.
	lists map[string]bool
}

// stateRowsOf returns how the rows of the graph m describes record its state.
func stateRowsOf(m durable.GraphManifest) *stateRows {
	if len(m.Reducers) == 0 {
		return nil
	}
	r := &stateRows{lists: make(map[string]bool, len(m.Reducers))}
	for f := range m.Reducers {
		r.lists[string(appendJSONString(nil, f))] = true
	}
	return r
}

// update returns the update that turns the state object prev into next: one member per field
// whose value changed, in next's order, then one per field removed — {"set": v} for a new
// value, {"removed": true} for a field next lacks, and for a list field with a reducer, a list
// before and after, {"keep": k, "add": [elements of next after k]}, k being the length of the
// lists' common prefix (an append keeps all of prev, a change of the last element all but
// one, a rewrite none). ok is false when r records whole states, prev is unknown, or the
// update would not fold back to next byte for byte (applyUpdate): the row then carries next
// whole, which a fold reads as well.
func (r *stateRows) update(prev, next []byte) (upd string, ok bool) {
	if r == nil || prev == nil {
		return "", false
	}
	pk, pv, ok := splitObject(prev)
	if !ok {
		return "", false
	}
	nk, nv, ok := splitObject(next)
	if !ok {
		return "", false
	}
	before := make(map[string]int, len(pk))
	for i, k := range pk {
		before[string(k)] = i
	}
	out := make([]byte, 0, 64)
	out = append(out, '{')
	member := func(k []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(out, k...), ':')
	}
	inNext := make(map[string]bool, len(nk))
	for i, k := range nk {
		inNext[string(k)] = true
		j, had := before[string(k)]
		if had && bytes.Equal(pv[j], nv[i]) {
			continue
		}
		member(k)
		if had && r.lists[string(k)] {
			if out, ok = appendListDelta(out, pv[j], nv[i]); ok {
				continue
			}
		}
		out = append(append(append(out, `{"set":`...), nv[i]...), '}')
	}
	for _, k := range pk {
		if !inNext[string(k)] {
			member(k)
			out = append(out, `{"removed":true}`...)
		}
	}
	out = append(out, '}')
	if s, err := applyUpdate(prev, out); err != nil || !bytes.Equal(s, next) {
		return "", false
	}
	return string(out), true
}

// appendListDelta appends {"keep": k, "add": [...]} turning the list prev into next; ok is
// false (dst unchanged) when either is no list.
func appendListDelta(dst, prev, next []byte) ([]byte, bool) {
	pe, ok := splitArray(prev)
	if !ok {
		return dst, false
	}
	ne, ok := splitArray(next)
	if !ok {
		return dst, false
	}
	k := 0
	for k < len(pe) && k < len(ne) && bytes.Equal(pe[k], ne[k]) {
		k++
	}
	dst = strconv.AppendInt(append(dst, `{"keep":`...), int64(k), 10)
	dst = append(append(dst, `,"add":`...), joinList(nil, ne[k:])...)
	return append(dst, '}'), true
}

// stateData returns the data of a history row that records the next head's state, kv (its
// other members, key/value pairs of raw JSON) first: "update", what the step changed since the
// state before the commit, for a graph whose rows record updates (stateRows.update), else
// "state", the state whole.
func (c *commitBuilder) stateData(kv ...string) string {
	if u, ok := c.form.update(c.base.stateVal, c.n.stateVal); ok {
		return jsonObject(append(kv, "update", u)...)
	}
	return jsonObject(append(kv, "state", c.n.stateJSON)...)
}

// completedData returns the data of a run_completed row at node: the run's output, whose
// "state" is, for a graph whose rows record updates, the update {} (none since the row before,
// which recorded the final state).
func (c *commitBuilder) completedData(node string) string {
	if c.form == nil {
		return c.n.outputJSON
	}
	var buf [512]byte
	b := graphKeys(append(buf[:0], '{'), c.base)
	b = jsonStr(b, "final_node", node)
	b = append(jsonKey(b, "update"), "{}"...)
	return string(append(b, '}'))
}
