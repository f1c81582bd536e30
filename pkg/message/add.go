package message

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"
)

// idSpace is the namespace of the IDs Add gives messages without one.
var idSpace = uuid.MustParse("8f6b6a4e-3c1d-4e59-9a55-2f0e0b7d51c3")

// Add merges updates into list as LangGraph's add_messages does and returns the new list
// (list itself is not changed): an update whose ID names a message in the list replaces it
// in place, a Remove marker deletes the message it names (RemoveAll: every message before
// it), and any other update is appended. A message without an ID is given one derived from
// its position and content, so that the same merge gives the same IDs on every replay.
// Errors: an invalid update (Message.Validate), or a Remove of an ID the list does not hold.
func Add(list []Message, updates ...Message) ([]Message, error) {
	out := slices.Clone(list)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = derivedID(i, out[i])
		}
	}
	if k := lastRemoveAll(updates); k >= 0 {
		out, updates = nil, updates[k+1:]
	}
	at := make(map[string]int, len(out))
	for i, m := range out {
		at[m.ID] = i
	}
	removed := map[string]bool{}
	for _, u := range updates {
		if err := u.Validate(); err != nil {
			return nil, err
		}
		if u.Type == TypeRemove {
			if _, ok := at[u.ID]; !ok {
				return nil, fmt.Errorf("remove: no message with id %q", u.ID)
			}
			removed[u.ID] = true
			continue
		}
		if u.ID == "" {
			u.ID = derivedID(len(out), u)
		}
		if i, ok := at[u.ID]; ok { // replaced in place, and kept if an earlier update removed it
			delete(removed, u.ID)
			out[i] = u
			continue
		}
		at[u.ID] = len(out)
		out = append(out, u)
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

// derivedID returns the ID of a message at position i of a list that came without one.
func derivedID(i int, m Message) string {
	b, err := json.Marshal(m)
	if err != nil {
		b = []byte(m.Type + m.Content.String())
	}
	return uuid.NewSHA1(idSpace, append([]byte(strconv.Itoa(i)+"\x00"), b...)).String()
}
