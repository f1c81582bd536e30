package message

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func h(id, text string) Message { return Message{Type: TypeHuman, Content: Text(text), ID: id} }
func a(id, text string) Message { return Message{Type: TypeAI, Content: Text(text), ID: id} }
func s(id, text string) Message { return Message{Type: TypeSystem, Content: Text(text), ID: id} }

// TestAdd_AsLangGraph ports the add_messages cases of langgraph's
// libs/langgraph/tests/test_messages_state.py.
func TestAdd_AsLangGraph(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		left    []Message
		right   []Message
		want    []Message
		wantErr error
	}{
		{"add_single_message", []Message{h("1", "Hello")}, []Message{a("2", "Hi there!")}, []Message{h("1", "Hello"), a("2", "Hi there!")}, nil},
		{"add_multiple_messages", []Message{h("1", "Hello")}, []Message{a("2", "Hi there!"), s("3", "System message")},
			[]Message{h("1", "Hello"), a("2", "Hi there!"), s("3", "System message")}, nil},
		{"update_existing_message", []Message{h("1", "Hello")}, []Message{h("1", "Hello again")}, []Message{h("1", "Hello again")}, nil},
		{"duplicates_in_input", nil, []Message{a("1", "Hi there!"), a("1", "Hi there again!")}, []Message{a("1", "Hi there again!")}, nil},
		{"duplicates_in_input_with_remove", []Message{a("1", "Hello!")}, []Message{Remove("1"), a("1", "Hi there!"), a("1", "Hi there again!")},
			[]Message{a("1", "Hi there again!")}, nil},
		{"remove_message", []Message{h("1", "Hello"), a("2", "Hi there!")}, []Message{Remove("2")}, []Message{h("1", "Hello")}, nil},
		{"duplicate_remove_message", []Message{h("1", "Hello"), a("2", "Hi there!")}, []Message{Remove("2"), Remove("2")}, []Message{h("1", "Hello")}, nil},
		{"remove_nonexistent_message", []Message{h("1", "Hello")}, []Message{Remove("2")}, nil, ErrUnknownID},
		{"mixed_operations", []Message{h("1", "Hello"), a("2", "Hi there!")}, []Message{h("1", "Updated hello"), Remove("2"), s("3", "New message")},
			[]Message{h("1", "Updated hello"), s("3", "New message")}, nil},
		{"empty_inputs", nil, nil, []Message{}, nil},
		{"empty_left", nil, []Message{h("1", "Hello")}, []Message{h("1", "Hello")}, nil},
		{"empty_right", []Message{h("1", "Hello")}, nil, []Message{h("1", "Hello")}, nil},
		{"delete_all", []Message{h("1", "Hello"), a("2", "Hi there!")}, []Message{Remove("1"), Remove("2")}, []Message{}, nil},
		{"remove_all_messages", []Message{h("1", "Hello"), a("2", "Hi there!")}, []Message{Remove(RemoveAll)}, []Message{}, nil},
		{"remove_all_then_update", []Message{h("1", "Hello"), a("2", "Hi there!")}, []Message{Remove(RemoveAll), h("3", "Updated hello")},
			[]Message{h("3", "Updated hello")}, nil},
		{"remove_all_drops_preceding_right", []Message{h("1", "Hello"), a("2", "Hi there!")},
			[]Message{h("3", "Updated hello"), Remove(RemoveAll), h("4", "Updated hi there")}, []Message{h("4", "Updated hi there")}, nil},
		// Not in LangGraph's tests, but its code: a Remove of a message an earlier update
		// added; a remove after a re-add deletes it again.
		{"remove_of_earlier_update", []Message{h("1", "a")}, []Message{a("2", "b"), Remove("2")}, []Message{h("1", "a")}, nil},
		{"remove_readd_remove", []Message{h("1", "a")}, []Message{Remove("1"), h("1", "b"), Remove("1")}, []Message{}, nil},
		{"replace_keeps_place", []Message{h("1", "a"), a("2", "b"), h("3", "c")}, []Message{a("2", "B")}, []Message{h("1", "a"), a("2", "B"), h("3", "c")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			left := append([]Message(nil), tt.left...)
			got, err := Add(tt.left, tt.right...)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
			if !reflect.DeepEqual(left, tt.left) {
				t.Errorf("Add changed its list: %v", tt.left)
			}
		})
	}
}

// TestAdd_MissingIDs: as test_missing_ids, every message gets an ID (derived, not uuid4), the
// same on every call, and messages with the same content each get their own.
func TestAdd_MissingIDs(t *testing.T) {
	t.Parallel()
	left := []Message{Human("Hello")}
	got, err := Add(left, AI("Hi there!"), AI("Hi there!"), Human("Hello"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d messages, want 4: %v", len(got), got)
	}
	seen := map[string]bool{}
	for _, m := range got {
		if m.ID == "" || seen[m.ID] {
			t.Fatalf("IDs %v: empty or repeated", got)
		}
		seen[m.ID] = true
	}
	again, _ := Add(left, AI("Hi there!"), AI("Hi there!"), Human("Hello"))
	if !reflect.DeepEqual(got, again) {
		t.Fatalf("a replay gave other IDs:\n %v\n %v", got, again)
	}
	if left[0].ID != "" {
		t.Fatal("Add changed its list")
	}
}

// TestAdd_DerivedIDNeverReplaces: a message without an ID is appended even where the same
// message came before at the same position (a removal between), as uuid4 would.
func TestAdd_DerivedIDNeverReplaces(t *testing.T) {
	t.Parallel()
	l, _ := Add(nil, h("p", "first"), Human("yes"))
	l, err := Add(l, Remove("p"))
	if err != nil {
		t.Fatal(err)
	}
	l, err = Add(l, h("p", "first"))
	if err != nil {
		t.Fatal(err)
	}
	l, err = Add(l, Human("yes")) // same content, position 1, after "p" again
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 3 || l[0].Text() != "yes" || l[2].Text() != "yes" || l[0].ID == l[2].ID {
		t.Fatalf("got %v, want [yes, first, yes] with two IDs", l)
	}
}

func TestAdd_RejectsInvalidUpdate(t *testing.T) {
	t.Parallel()
	for _, u := range []Message{{Type: "robot"}, {Type: TypeTool, Content: Text("x")}, {Type: TypeRemove}} {
		if _, err := Add(nil, u); err == nil {
			t.Errorf("Add accepted %#v", u)
		}
	}
	// An invalid update before RemoveAll fails too, as add_messages coerces all of them first.
	if _, err := Add(nil, Message{Type: "robot"}, Remove(RemoveAll)); err == nil {
		t.Error("Add accepted an invalid update before RemoveAll")
	}
}

func TestAddMessages_Join(t *testing.T) {
	t.Parallel()
	enc := func(ms ...Message) json.RawMessage {
		b, err := json.Marshal(ms)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := []Message{h("1", "hi")}
	tests := []struct {
		name    string
		base    json.RawMessage
		updates []json.RawMessage
		want    []Message
	}{
		{"branches append, in branch order", enc(base...),
			[]json.RawMessage{enc(h("1", "hi"), a("a", "from a")), enc(h("1", "hi"), a("b", "from b"))},
			[]Message{h("1", "hi"), a("a", "from a"), a("b", "from b")}},
		{"a branch returns only its new messages", enc(base...),
			[]json.RawMessage{enc(a("a", "from a")), enc(h("1", "hi"), a("b", "from b"))},
			[]Message{h("1", "hi"), a("a", "from a"), a("b", "from b")}},
		{"replace by id across branches: the later branch wins, in place", enc(base...),
			[]json.RawMessage{enc(h("1", "hi"), a("x", "first")), enc(a("x", "second"), h("1", "HI"))},
			[]Message{h("1", "HI"), a("x", "second")}},
		{"a branch removes by marker", enc(h("1", "hi"), a("2", "old")),
			[]json.RawMessage{enc(Remove("2")), enc(h("1", "hi"), a("2", "old"), a("3", "new"))},
			[]Message{h("1", "hi"), a("3", "new")}},
		{"base as OpenAI dicts matches the branch's encoding", json.RawMessage(`[{"role":"user","content":"hi","id":"1"}]`),
			[]json.RawMessage{enc(h("1", "hi"), a("a", "x"))},
			[]Message{h("1", "hi"), a("a", "x")}},
		{"one branch replaces, another removes", enc(h("1", "hi"), a("2", "old")),
			[]json.RawMessage{enc(h("1", "rephrased"), a("2", "old")), enc(Remove("2"))},
			[]Message{h("1", "rephrased")}},
		{"a branch clears the list", enc(h("1", "hi"), a("2", "old")),
			[]json.RawMessage{enc(a("3", "kept? no")), enc(Remove(RemoveAll), s("4", "fresh"))},
			[]Message{s("4", "fresh")}},
		{"null base", json.RawMessage(`null`), []json.RawMessage{enc(a("a", "x")), json.RawMessage(`null`)}, []Message{a("a", "x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := AddMessages.Reduce(tt.base, tt.updates)
			if err != nil {
				t.Fatal(err)
			}
			if want := enc(tt.want...); string(out) != string(want) {
				t.Errorf("got  %s\nwant %s", out, want)
			}
		})
	}
}

// TestAddMessages_JoinDerivesIDsAsABranchWould: branches that append without IDs, and
// branches that call Add (which gives the base's messages and their own IDs), join to the
// same list with no duplicate of the base.
func TestAddMessages_JoinDerivesIDsAsABranchWould(t *testing.T) {
	t.Parallel()
	base := json.RawMessage(`[{"role":"user","content":"hi"}]`)
	var start []Message
	if err := json.Unmarshal(base, &start); err != nil {
		t.Fatal(err)
	}
	withAdd, err := Add(start, AI("from a"))
	if err != nil {
		t.Fatal(err)
	}
	plain := append(append([]Message(nil), start...), AI("from b"))
	ua, _ := json.Marshal(withAdd)
	ub, _ := json.Marshal(plain)
	out, err := AddMessages.Reduce(base, []json.RawMessage{ua, ub})
	if err != nil {
		t.Fatal(err)
	}
	var got []Message
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Text() != "hi" || got[1].Text() != "from a" || got[2].Text() != "from b" || got[0].ID != withAdd[0].ID {
		t.Fatalf("joined %s", out)
	}
}

func TestAddMessages_Errors(t *testing.T) {
	t.Parallel()
	if _, err := AddMessages.Reduce(json.RawMessage(`{}`), nil); err == nil {
		t.Error("a base that is no list was accepted")
	}
	if _, err := AddMessages.Reduce(json.RawMessage(`[]`), []json.RawMessage{json.RawMessage(`[{"type":"remove","id":"9","content":""}]`)}); !errors.Is(err, ErrUnknownID) {
		t.Errorf("remove of an unknown id: %v", err)
	}
	if _, err := AddMessages.Reduce(json.RawMessage(`[]`), []json.RawMessage{json.RawMessage(`[1]`)}); err == nil {
		t.Error("an update that is no message was accepted")
	}
	if name := AddMessages.(interface{ ReducerName() string }).ReducerName(); name != "add_messages" {
		t.Errorf("name %q", name)
	}
}
