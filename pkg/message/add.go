package message

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"
)

// ErrUnknownID is the error of Add (wrapped, with the ID) for a Remove marker naming an ID the
// list does not hold: LangGraph's add_messages raises "Attempting to delete a message with an
// ID that doesn't exist".
var ErrUnknownID = errors.New("message: attempting to delete a message with an ID that doesn't exist")

// idSpace is the namespace of the IDs Add gives messages without one.
var idSpace = uuid.MustParse("8f6b6a4e-3c1d-4e59-9a55-2f0e0b7d51c3")

// Add merges updates into list as LangGraph's add_messages does and returns the new list
// (list itself is not changed):
//   - an update whose ID names a message in the list (or an earlier update) replaces it in
//     place;
//   - a Remove marker deletes the message it names once all updates are merged, so a message
//     removed and then added again with the same ID in one call stays, in its place, with
//     the later content;
//   - a Remove marker with ID RemoveAll clears the list: the result is the updates after the
//     last such marker (merged among themselves by these rules; add_messages returns them as
//     they are, duplicates and markers included);
//   - any other update is appended.
//
// One deliberate difference: add_messages gives a message without an ID a random uuid4; Add
// derives it (a name-based UUID) from the message's content, its position and the ID of the
// message before it, so that replaying a durable run gives every message the same ID. A
// derived ID that a message of the list already has is derived again, so a message without
// an ID is always appended, as in LangGraph. Two branches of a fan-out that each add the
// same message at the same place, though, derive the same ID, and the join keeps one (see
// AddMessages).
//
// Errors: an invalid update (Message.Validate), or ErrUnknownID for a Remove marker of an
// ID that neither the list nor an earlier update holds.
func Add(list []Message, updates ...Message) ([]Message, error) {
	for _, u := range updates {
		if err := u.Validate(); err != nil {
			return nil, err
		}
	}
	out := make([]Message, 0, len(list)+len(updates))
	at := make(map[string]int, len(list)+len(updates))
	push := func(m Message) {
		if m.ID == "" {
			m.ID = newID(at, out, m)
		}
		at[m.ID] = len(out)
		out = append(out, m)
	}
	if k := lastRemoveAll(updates); k >= 0 {
		updates = updates[k+1:]
	} else {
		for _, m := range list {
			push(m)
		}
	}
	removed := map[string]bool{}
	for _, u := range updates {
		if u.Type == TypeRemove {
			if _, ok := at[u.ID]; !ok {
				return nil, fmt.Errorf("remove %q: %w", u.ID, ErrUnknownID)
			}
			removed[u.ID] = true
			continue
		}
		if i, ok := at[u.ID]; ok && u.ID != "" { // replaced in place, and kept if an earlier update removed it
			delete(removed, u.ID)
			out[i] = u
			continue
		}
		push(u)
	}
	if len(removed) > 0 {
		out = slices.DeleteFunc(out, func(m Message) bool { return removed[m.ID] })
	}
	return out, nil
}

// lastRemoveAll returns the index of the last RemoveAll marker in updates, or -1.
func lastRemoveAll(updates []Message) int {
	for i := len(updates) - 1; i >= 0; i-- {
		if updates[i].Type == TypeRemove && updates[i].ID == RemoveAll {
			return i
		}
	}
	return -1
}

// newID returns the ID of m, which came without one, appended to out: derived from its
// position, the ID of the message before it and its content, and derived again (with a
// counter) while a message of out has it.
func newID(at map[string]int, out []Message, m Message) string {
	prev := ""
	if len(out) > 0 {
		prev = out[len(out)-1].ID
	}
	b, err := json.Marshal(m)
	if err != nil {
		b = []byte(m.Type + m.Content.String())
	}
	seed := append([]byte(strconv.Itoa(len(out))+"\x00"+prev+"\x00"), b...)
	for n := 0; ; n++ {
		s := seed
		if n > 0 {
			s = append(slices.Clip(seed), "\x00"+strconv.Itoa(n)...)
		}
		id := uuid.NewSHA1(idSpace, s).String()
		if _, taken := at[id]; !taken {
			return id
		}
	}
}
