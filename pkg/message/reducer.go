package message

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// AddMessages is the reducer of a messages field of a durable graph (ManifestBuilder.Reduce):
// at a fan-out's join, each branch's messages after the list it started from are merged in
// branch order with Add's rules (an ID replaces, a Remove marker deletes, the rest appends).
// A branch whose list does not begin with that list contributes its whole list, as updates.
// It enters the graph hash as "add_messages".
var AddMessages durable.Reducer = addMessages{}

type addMessages struct{}

// ReducerName returns "add_messages".
func (addMessages) ReducerName() string { return "add_messages" }

// Reduce implements AddMessages.
func (addMessages) Reduce(base json.RawMessage, updates []json.RawMessage) (json.RawMessage, error) {
	list, err := decodeList(base)
	if err != nil {
		return nil, fmt.Errorf("add_messages: list before the fan-out: %w", err)
	}
	baseRaw, err := rawElems(base)
	if err != nil {
		return nil, fmt.Errorf("add_messages: list before the fan-out: %w", err)
	}
	for i, u := range updates {
		raws, err := rawElems(u)
		if err != nil {
			return nil, fmt.Errorf("add_messages: update %d: %w", i, err)
		}
		if hasPrefix(raws, baseRaw) {
			raws = raws[len(baseRaw):]
		}
		ms := make([]Message, len(raws))
		for j, r := range raws {
			if err := json.Unmarshal(r, &ms[j]); err != nil {
				return nil, fmt.Errorf("add_messages: update %d: %w", i, err)
			}
		}
		if list, err = Add(list, ms...); err != nil {
			return nil, fmt.Errorf("add_messages: update %d: %w", i, err)
		}
	}
	return json.Marshal(list)
}

// decodeList decodes a list of messages; null is empty.
func decodeList(raw json.RawMessage) ([]Message, error) {
	var ms []Message
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, err
	}
	return ms, nil
}

// rawElems returns the compacted elements of a JSON list; null is empty.
func rawElems(raw json.RawMessage) ([][]byte, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("not a JSON list: %w", err)
	}
	out := make([][]byte, len(elems))
	for i, e := range elems {
		var b bytes.Buffer
		if err := json.Compact(&b, e); err != nil {
			return nil, err
		}
		out[i] = b.Bytes()
	}
	return out, nil
}

func hasPrefix(elems, prefix [][]byte) bool {
	if len(elems) < len(prefix) {
		return false
	}
	for i := range prefix {
		if !bytes.Equal(elems[i], prefix[i]) {
			return false
		}
	}
	return true
}
