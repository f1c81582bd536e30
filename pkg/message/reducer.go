package message

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// AddMessages is the reducer of a messages field of a durable graph (ManifestBuilder.Reduce),
// LangGraph's add_messages at a fan-out's join: each branch's update is merged with Add, in
// branch order, into the list before the fan-out. A branch's update is the messages after
// that list when its list begins with it (a handler that appends, or calls Add, on the
// state's list), else its whole list (a handler that returns only its new messages, or Remove
// markers). Messages are compared as they encode, so a list that came in as OpenAI dicts
// matches the same messages in a branch's state.
//
// Every branch's list holds all of its messages, so a branch removes a message at the join
// only by a Remove marker in its list: a message merely missing from it stays. Two branches
// that give a message the same ID (the same ID of their own, or the same message without one
// added by Add at the same place) meet as a replacement: the later branch's message wins, in
// the earlier's place. It enters the graph hash as "add_messages".
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
	prefix, err := encodeEach(list)
	if err != nil {
		return nil, fmt.Errorf("add_messages: list before the fan-out: %w", err)
	}
	out := list
	for i, u := range updates {
		ms, err := decodeList(u)
		if err != nil {
			return nil, fmt.Errorf("add_messages: update %d: %w", i, err)
		}
		enc, err := encodeEach(ms)
		if err != nil {
			return nil, fmt.Errorf("add_messages: update %d: %w", i, err)
		}
		if hasPrefix(enc, prefix) {
			ms = ms[len(prefix):]
		}
		if out, err = Add(out, ms...); err != nil {
			return nil, fmt.Errorf("add_messages: update %d: %w", i, err)
		}
	}
	if out == nil {
		out = []Message{}
	}
	return json.Marshal(out)
}

// decodeList decodes a list of messages; null is empty.
func decodeList(raw json.RawMessage) ([]Message, error) {
	var ms []Message
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, err
	}
	return ms, nil
}

// encodeEach returns the encoding of each message.
func encodeEach(ms []Message) ([][]byte, error) {
	out := make([][]byte, len(ms))
	for i, m := range ms {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out[i] = b
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
