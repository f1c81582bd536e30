package durable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Reducer merges what several branches of a fan-out (Parallel, Map) wrote to one state field
// into the field's value after the join. A Reducer must be deterministic: the engine calls
// it with the updates in branch order, whatever order the branches finished in, so the
// joined state is the same. Declare one per field with ManifestBuilder.Reduce; a field
// without one may be updated by one branch only.
type Reducer interface {
	// Reduce returns the field's value after the join: base is its value before the fan-out
	// (null when the state lacked it), updates the values of the branches that changed it,
	// in branch order, each as the branch's state held it after its node ran.
	Reduce(base json.RawMessage, updates []json.RawMessage) (json.RawMessage, error)
}

// ReducerFunc is a Reducer written as a function. It enters the graph hash as "custom", not
// under its Go name, so renaming it is not a new graph version; a Reducer that implements
// ReducerNamer names itself instead.
type ReducerFunc func(base json.RawMessage, updates []json.RawMessage) (json.RawMessage, error)

// Reduce calls f.
func (f ReducerFunc) Reduce(base json.RawMessage, updates []json.RawMessage) (json.RawMessage, error) {
	return f(base, updates)
}

// ReducerNamer is implemented by a Reducer with a name of its own, the name its field enters
// the graph hash with ("append" and "merge_keys" for the built-ins).
type ReducerNamer interface {
	ReducerName() string
}

// The built-in reducers.
var (
	// Append reduces a list field: the list before the fan-out, followed by what each branch
	// added, in branch order. A branch "added" the elements after the list before the
	// fan-out when its list begins with it (a handler that appends: append(s.Items, x)),
	// else its whole list (a handler that returns only its new elements).
	Append Reducer = appendReducer{}
	// MergeKeys reduces a map (JSON object) field: the map before the fan-out with every key
	// a branch set to a new value, in branch order (a later branch wins a key two set). Keys
	// a branch dropped are kept: merging never deletes.
	MergeKeys Reducer = mergeKeysReducer{}
)

type appendReducer struct{}

// ReducerName returns "append".
func (appendReducer) ReducerName() string { return "append" }

// Reduce implements Append.
func (appendReducer) Reduce(base json.RawMessage, updates []json.RawMessage) (json.RawMessage, error) {
	out, err := arrayElems(base)
	if err != nil {
		return nil, fmt.Errorf("append: list before the fan-out: %w", err)
	}
	prefix := len(out)
	for i, u := range updates {
		elems, err := arrayElems(u)
		if err != nil {
			return nil, fmt.Errorf("append: update %d: %w", i, err)
		}
		if len(elems) >= prefix && slices.EqualFunc(elems[:prefix], out[:prefix], bytes.Equal) {
			elems = elems[prefix:]
		}
		out = append(out, elems...)
	}
	buf := append(make([]byte, 0, 2+len(out)*16), '[')
	for i, e := range out {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, e...)
	}
	return append(buf, ']'), nil
}

// arrayElems returns the compacted elements of a JSON array; null is empty.
func arrayElems(raw json.RawMessage) ([][]byte, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("not a JSON list: %w", err)
	}
	out := make([][]byte, len(elems))
	for i, e := range elems {
		out[i] = compact(e)
	}
	return out, nil
}

type mergeKeysReducer struct{}

// ReducerName returns "merge_keys".
func (mergeKeysReducer) ReducerName() string { return "merge_keys" }

// Reduce implements MergeKeys.
func (mergeKeysReducer) Reduce(base json.RawMessage, updates []json.RawMessage) (json.RawMessage, error) {
	ms, err := objectMembers(base)
	if err != nil {
		return nil, fmt.Errorf("merge_keys: map before the fan-out: %w", err)
	}
	before := make(map[string][]byte, len(ms))
	pos := make(map[string]int, len(ms))
	for i, m := range ms {
		before[m.key], pos[m.key] = compact(m.val), i
	}
	for i, u := range updates {
		um, err := objectMembers(u)
		if err != nil {
			return nil, fmt.Errorf("merge_keys: update %d: %w", i, err)
		}
		for _, m := range um {
			if b, ok := before[m.key]; ok && bytes.Equal(b, compact(m.val)) {
				continue // unchanged by this branch
			}
			if j, ok := pos[m.key]; ok {
				ms[j].val = m.val
				continue
			}
			pos[m.key] = len(ms)
			ms = append(ms, m)
		}
	}
	return appendObject(nil, ms), nil
}

// reducerName is the name r enters the graph hash with.
func reducerName(r Reducer) string {
	if n, ok := r.(ReducerNamer); ok && n.ReducerName() != "" {
		return n.ReducerName()
	}
	return customReducerName
}

// customReducerName is the name a reducer without a name of its own (a ReducerFunc, a type
// that is no ReducerNamer) enters the graph hash with: not its Go name, so that renaming or
// moving it is not a new graph version, and the hash is the same in tests and in any binary.
const customReducerName = "custom"

// Reduce declares how the branches of a fan-out merge their updates of field (its JSON
// name) at the join: Append, MergeKeys or a Reducer of the author's. The reducer's name
// enters the graph hash (a graph that declares none keeps the hash it had). Errors (wrapping
// ErrInvalidGraph, reported again by Build): "reducer of field '<f>' cannot be nil",
// "reducer field '<f>' is not a field of state model <M>", "duplicate reducer for field
// '<f>'", "reducer 'append' needs a list field: field '<f>' is <type>" (and 'merge_keys' a
// map field).
func (b *ManifestBuilder[S]) Reduce(field string, r Reducer) error {
	if r == nil {
		return b.fail(fmt.Sprintf("reducer of field '%s' cannot be nil", field))
	}
	schema, err := b.stateSchema()
	if err != nil {
		return b.fail(err.Error())
	}
	i, ok := schema.byName[field]
	if !ok {
		return b.fail(fmt.Sprintf("reducer field '%s' is not a field of state model %s", field, schema.name))
	}
	if _, dup := b.reducers[field]; dup {
		return b.fail(fmt.Sprintf("duplicate reducer for field '%s'", field))
	}
	typ := schema.fields[i].typ
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch r.(type) {
	case appendReducer:
		if typ.Kind() != reflect.Slice && typ.Kind() != reflect.Array {
			return b.fail(fmt.Sprintf("reducer 'append' needs a list field: field '%s' is %s", field, schema.fields[i].typ))
		}
	case mergeKeysReducer:
		if typ.Kind() != reflect.Map {
			return b.fail(fmt.Sprintf("reducer 'merge_keys' needs a map field: field '%s' is %s", field, schema.fields[i].typ))
		}
	}
	if b.reducers == nil {
		b.reducers = map[string]Reducer{}
	}
	b.reducers[field] = r
	return nil
}

// reducerNames returns field → reducer name, nil when there are none.
func reducerNames(rs map[string]Reducer) map[string]string {
	if len(rs) == 0 {
		return nil
	}
	out := make(map[string]string, len(rs))
	for f, r := range rs {
		out[f] = reducerName(r)
	}
	return out
}

// appendReducers appends the canonical `,"reducers":{...}` member, keys sorted, only when
// the graph declares reducers: a graph without keeps its hash.
func appendReducers(dst []byte, names map[string]string) []byte {
	if len(names) == 0 {
		return dst
	}
	dst = append(dst, `,"reducers":{`...)
	for i, f := range slices.Sorted(maps.Keys(names)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = pyjson.AppendString(dst, f)
		dst = append(dst, ':')
		dst = pyjson.AppendString(dst, names[f])
	}
	return append(dst, '}')
}
