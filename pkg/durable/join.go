package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// ErrBranchConflict marks a join of branches that updated the same field with no reducer.
var ErrBranchConflict = errors.New("durable: branches update the same field")

// BranchConflictError reports two branches that update one state field that has no
// reducer. It wraps ErrBranchConflict.
type BranchConflictError struct {
	// Field is the state field.
	Field string
	// First and Second are the indexes of the first two branches that update it.
	First, Second int
}

// Error names the branches and the field.
func (e *BranchConflictError) Error() string {
	return fmt.Sprintf("branches %d and %d both update field '%s', which has no reducer (declare one with ManifestBuilder.Reduce)", e.First, e.Second, e.Field)
}

// Unwrap returns ErrBranchConflict.
func (e *BranchConflictError) Unwrap() error { return ErrBranchConflict }

// ReducerError reports a reducer that failed at a join.
type ReducerError struct {
	// Field is the state field whose reducer failed.
	Field string
	// Err is the reducer's error.
	Err error
}

// Error names the field and the reducer's error.
func (e *ReducerError) Error() string {
	return fmt.Sprintf("reducer of field '%s': %v", e.Field, e.Err)
}

// Unwrap returns the reducer's error.
func (e *ReducerError) Unwrap() error { return e.Err }

// member is one member of a JSON object, its value as written.
type member struct {
	key string
	val json.RawMessage
}

// objectMembers returns the members of a JSON object in document order.
func objectMembers(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: tok.(string), val: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// compact returns raw without insignificant whitespace (raw itself when it is invalid).
func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// appendObject writes members as a JSON object.
func appendObject(dst []byte, ms []member) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		k, _ := json.Marshal(m.key) // a string always encodes
		dst = append(append(dst, k...), ':')
		dst = append(dst, compact(m.val)...)
	}
	return append(dst, '}')
}

// stateUpdate returns the fields of the state object after whose JSON differs from before's,
// as an object in after's order: what a branch's node changed (graphrun.StateUpdate). Both
// must be JSON objects.
func stateUpdate(before, after json.RawMessage) (json.RawMessage, error) {
	old, err := objectMembers(before)
	if err != nil {
		return nil, fmt.Errorf("state update: decode state before: %w", err)
	}
	cur, err := objectMembers(after)
	if err != nil {
		return nil, fmt.Errorf("state update: decode state after: %w", err)
	}
	prev := make(map[string]json.RawMessage, len(old))
	for _, m := range old {
		prev[m.key] = compact(m.val)
	}
	var changed []member
	for _, m := range cur {
		if p, ok := prev[m.key]; ok && bytes.Equal(p, compact(m.val)) {
			continue
		}
		changed = append(changed, m)
	}
	return appendObject(nil, changed), nil
}

// joinBranches merges branch results into base, a state object, in branch index order: a
// field updated by one branch takes its value; a field updated by several takes what its
// reducer in reducers makes of base's value and theirs (in index order), and without one the
// join fails with a *BranchConflictError. Other fields keep base's values; base's key order
// is kept, new fields follow. It is the join of a Graph that is no graphrun.Joiner (with no
// reducers, graphrun.JoinBranches), and the first half of GraphRegistration's. Reducer
// panics become errors.
func joinBranches(base json.RawMessage, results []graphrun.BranchResult, reducers map[string]Reducer) (json.RawMessage, error) {
	ms, err := objectMembers(base)
	if err != nil {
		return nil, fmt.Errorf("join: decode state: %w", err)
	}
	results = slices.Clone(results)
	slices.SortStableFunc(results, func(a, b graphrun.BranchResult) int { return a.Index - b.Index })
	type fieldUpdates struct {
		branches []int
		values   []json.RawMessage
	}
	updates := map[string]*fieldUpdates{}
	var order []string // fields in order of first update
	for _, r := range results {
		um, err := objectMembers(r.Update)
		if err != nil {
			return nil, fmt.Errorf("join: decode update of branch %d: %w", r.Index, err)
		}
		for _, m := range um {
			u := updates[m.key]
			if u == nil {
				u = &fieldUpdates{}
				updates[m.key] = u
				order = append(order, m.key)
			}
			u.branches = append(u.branches, r.Index)
			u.values = append(u.values, m.val)
		}
	}
	pos := make(map[string]int, len(ms))
	for i, m := range ms {
		pos[m.key] = i
	}
	for _, field := range order {
		u := updates[field]
		var cur json.RawMessage = json.RawMessage("null")
		i, had := pos[field]
		if had {
			cur = ms[i].val
		}
		var v json.RawMessage
		switch r, ok := reducers[field]; {
		case ok:
			if v, err = reduce(field, r, cur, u.values); err != nil {
				return nil, err
			}
		case len(u.values) > 1:
			return nil, &BranchConflictError{Field: field, First: u.branches[0], Second: u.branches[1]}
		default:
			v = u.values[0]
		}
		if had {
			ms[i].val = v
		} else {
			pos[field] = len(ms)
			ms = append(ms, member{key: field, val: v})
		}
	}
	return appendObject(nil, ms), nil
}

// reduce runs r, turning a panic or an invalid result into a *ReducerError.
func reduce(field string, r Reducer, base json.RawMessage, updates []json.RawMessage) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &ReducerError{Field: field, Err: fmt.Errorf("reducer panicked: %v", p)}
		}
	}()
	out, err = r.Reduce(base, updates)
	if err != nil {
		return nil, &ReducerError{Field: field, Err: err}
	}
	if !json.Valid(out) {
		return nil, &ReducerError{Field: field, Err: errors.New("reducer returned invalid JSON")}
	}
	return out, nil
}

// Join implements graphrun.Joiner: joinBranches with the graph's reducers, then the merged
// state is validated against the model (and dumped with every field, in declaration order).
func (r *registration[S]) Join(_ context.Context, base json.RawMessage, results []graphrun.BranchResult) (json.RawMessage, error) {
	if r == nil {
		return nil, errNotBuilt
	}
	joined, err := joinBranches(base, results, r.reducers)
	if err != nil {
		return nil, err
	}
	var s S
	if err := r.schema.decode(joined, &s); err != nil {
		return nil, err
	}
	return r.schema.dump(&s)
}

var _ graphrun.Joiner = (*registration[struct{}])(nil)
