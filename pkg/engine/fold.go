package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrBadUpdate reports a history row whose "update" does not apply to the state before it
// (FoldState): the row is not one the engine wrote after that state.
var ErrBadUpdate = errors.New("engine: history row's update does not apply to the state before it")

// FoldState returns the run's state after history row ev, given prev, the state after the
// run's rows before ev (nil before its run_started row), and whether ev records a state at all
// (a row that does not returns prev). It is the one place the history's states are rebuilt:
//
//   - run_started records the run's input (its initial_state), and continued_as_new the input
//     of the generation it begins (continue.go), whole in either form;
//   - node_completed, event_applied, branches_joined, child_completed and run_completed record
//     the state after their step: whole, as "state", for a graph without reducers; as
//     "update", what the step changed against prev, for a graph that declares reducers
//     (durable.ManifestBuilder.Reduce), its form in docs/durable-graphs.md ("What history
//     stores");
//   - every other row records none.
//
// A reader that starts in the middle of a run's history (a page, a resumed stream) folds from
// the run's first row: what that costs is one read of that run's history, oldest first. Errors:
// ErrBadUpdate (wrapped) for an update that does not apply to prev, a decode error for a row
// whose data is no JSON object.
func FoldState(prev json.RawMessage, ev HistoryEvent) (json.RawMessage, bool, error) {
	switch ev.Type {
	case HistoryRunStarted, HistoryContinuedAsNew:
		var d struct {
			InitialState json.RawMessage `json:"initial_state"`
		}
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return prev, false, fmt.Errorf("fold state: row %d (%s): %w", ev.Sequence, ev.Type, err)
		}
		return d.InitialState, d.InitialState != nil, nil
	case HistoryNodeCompleted, HistoryEventApplied, HistoryBranchesJoined, HistoryChildCompleted, HistoryRunCompleted:
	default:
		return prev, false, nil
	}
	var d struct {
		State  json.RawMessage `json:"state"`
		Update json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return prev, false, fmt.Errorf("fold state: row %d (%s): %w", ev.Sequence, ev.Type, err)
	}
	switch {
	case d.State != nil:
		return d.State, true, nil
	case d.Update != nil:
		s, err := applyUpdate(prev, d.Update)
		if err != nil {
			return prev, false, fmt.Errorf("fold state: row %d (%s): %w", ev.Sequence, ev.Type, err)
		}
		return s, true, nil
	}
	return prev, false, nil
}

// FoldStates returns the state after each row of rows, a run's history from its first row
// (nil for a row before the run_started row). Its errors are FoldState's.
func FoldStates(rows []HistoryEvent) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(rows))
	var s json.RawMessage
	for i, ev := range rows {
		var err error
		if s, _, err = FoldState(s, ev); err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// The operations of an update's member, one per changed field (stateRows.update writes them).
var (
	opSet     = []byte(`"set"`)     // {"set": <value>}: the field's new value
	opKeep    = []byte(`"keep"`)    // {"keep": k, "add": [...]}: the list's first k elements, then add
	opAdd     = []byte(`"add"`)     //
	opRemoved = []byte(`"removed"`) // {"removed": true}: the field is no longer in the state
)

// applyUpdate returns the state object prev with update applied: prev's members in prev's
// order, each changed one replaced in place and a removed one left out, then the fields prev
// did not have, in the update's order. Keys and values are copied as written.
func applyUpdate(prev, update []byte) (json.RawMessage, error) {
	pk, pv, ok := splitObject(prev)
	if !ok {
		return nil, fmt.Errorf("%w: the state before it is no JSON object", ErrBadUpdate)
	}
	uk, uv, ok := splitObject(update)
	if !ok {
		return nil, fmt.Errorf("%w: the update is no JSON object", ErrBadUpdate)
	}
	ops := make(map[string]int, len(uk))
	for i, k := range uk {
		ops[string(k)] = i
	}
	out := make([]byte, 0, len(prev)+len(update))
	out = append(out, '{')
	member := func(k []byte, op, cur []byte) error {
		v, keep, err := applyOp(op, cur)
		if err != nil {
			return fmt.Errorf("%w: field %s: %v", ErrBadUpdate, k, err)
		}
		if !keep {
			return nil
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, k...), ':'), v...)
		return nil
	}
	seen := make(map[string]bool, len(pk))
	for i, k := range pk {
		seen[string(k)] = true
		j, changed := ops[string(k)]
		if !changed {
			if err := member(k, nil, pv[i]); err != nil {
				return nil, err
			}
			continue
		}
		if err := member(k, uv[j], pv[i]); err != nil {
			return nil, err
		}
	}
	for i, k := range uk {
		if seen[string(k)] {
			continue
		}
		if err := member(k, uv[i], nil); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// applyOp returns a field's value after op (nil: unchanged) given cur, its value before (nil:
// absent), and whether the field is in the state after it.
func applyOp(op, cur []byte) (v []byte, present bool, err error) {
	if op == nil {
		return cur, true, nil
	}
	keys, vals, ok := splitObject(op)
	if !ok {
		return nil, false, errors.New("its operation is no JSON object")
	}
	var keep, add []byte
	for i, k := range keys {
		switch {
		case bytes.Equal(k, opSet):
			return vals[i], true, nil
		case bytes.Equal(k, opRemoved):
			return nil, false, nil
		case bytes.Equal(k, opKeep):
			keep = vals[i]
		case bytes.Equal(k, opAdd):
			add = vals[i]
		}
	}
	if keep == nil || add == nil {
		return nil, false, errors.New(`its operation is none of set, removed, or keep and add`)
	}
	k, err := strconv.Atoi(string(keep))
	if err != nil || k < 0 {
		return nil, false, fmt.Errorf("keep %s is no count", keep)
	}
	var before [][]byte
	if k > 0 {
		if before, ok = splitArray(cur); !ok || k > len(before) {
			return nil, false, fmt.Errorf("keep %d: the list before it has fewer elements, or is no list", k)
		}
	}
	added, ok := splitArray(add)
	if !ok {
		return nil, false, errors.New("add is no JSON list")
	}
	return joinList(before[:k], added), true, nil
}

// joinList writes the elements of a and then b as one JSON list.
func joinList(a, b [][]byte) []byte {
	n := 2
	for _, e := range a {
		n += len(e) + 1
	}
	for _, e := range b {
		n += len(e) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for _, part := range [2][][]byte{a, b} {
		for _, e := range part {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, e...)
		}
	}
	return append(out, ']')
}
