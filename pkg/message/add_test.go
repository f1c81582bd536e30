package message

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/uuid"
)

func withID(m Message, id string) Message {
	m.ID = id
	return m
}

// TestAdd_AsLangGraph ports LangGraph's own add_messages tests
// (libs/langgraph/tests/test_messages_state.py, langgraph commit f09cfe8): the cases whose
// messages carry IDs compare whole lists.
func TestAdd_AsLangGraph(t *testing.T) {
	t.Parallel()
	h1 := withID(Human("Hello"), "1")
	a2 := withID(AI("Hi there!"), "2")
	tests := []struct {
		name          string
		list, updates []Message
		want          []Message
	}{
		{"add single message", []Message{h1}, []Message{a2}, []Message{h1, a2}},
		{"add multiple messages", []Message{h1}, []Message{a2, withID(System("System message"), "3")},
			[]Message{h1, a2, withID(System("System message"), "3")}},
		{"update existing message", []Message{h1}, []Message{withID(Human("Hello again"), "1")},
			[]Message{withID(Human("Hello again"), "1")}},
		{"duplicates in input", nil, []Message{withID(AI("Hi there!"), "1"), withID(AI("Hi there again!"), "1")},
			[]Message{withID(AI("Hi there again!"), "1")}},
		{"duplicates in input with remove", []Message{withID(AI("Hello!"), "1")},
			[]Message{Remove("1"), withID(AI("Hi there!"), "1"), withID(AI("Hi there again!"), "1")},
			[]Message{withID(AI("Hi there again!"), "1")}},
		{"remove message", []Message{h1, a2}, []Message{Remove("2")}, []Message{h1}},
		{"duplicate remove message", []Message{h1, a2}, []Message{Remove("2"), Remove("2")}, []Message{h1}},
		{"mixed operations", []Message{h1, a2},
			[]Message{withID(Human("Updated hello"), "1"), Remove("2"), withID(System("New message"), "3")},
			[]Message{withID(Human("Updated hello"), "1"), withID(System("New message"), "3")}},
		{"empty inputs", nil, nil, []Message{}},
		{"empty updates", []Message{h1}, nil, []Message{h1}},
		{"empty list", nil, []Message{h1}, []Message{h1}},
		{"delete all", []Message{h1, a2}, []Message{Remove("1"), Remove("2")}, []Message{}},
		{"remove all", []Message{h1, a2}, []Message{Remove(RemoveAll)}, []Message{}},
		{"remove all then add", []Message{h1, a2}, []Message{Remove(RemoveAll), withID(Human("Updated hello"), "9")},
			[]Message{withID(Human("Updated hello"), "9")}},
		{"remove all drops the updates before it", []Message{h1, a2},
			[]Message{withID(Human("Updated hello"), "8"), Remove(RemoveAll), withID(Human("Updated hi there"), "9")},
			[]Message{withID(Human("Updated hi there"), "9")}},
		{"remove then re-add keeps the place", []Message{h1, a2, withID(System("s"), "3")},
			[]Message{Remove("2"), withID(AI("again"), "2")},
			[]Message{h1, withID(AI("again"), "2"), withID(System("s"), "3")}},
		{"add then remove in one update", []Message{h1}, []Message{a2, Remove("2")}, []Message{h1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			list := append([]Message(nil), tt.list...)
			got, err := Add(list, tt.updates...)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
			if !reflect.DeepEqual(list, tt.list) {
				t.Errorf("Add changed its list: %#v", list)
			}
		})
	}
}

func TestAdd_RemoveUnknownIDFails(t *testing.T) {
	t.Parallel()
	for _, updates := range [][]Message{
		{Remove("2")},
		{Remove("2"), withID(Human("late"), "2")}, // LangGraph checks the ID when it meets the marker
	} {
		_, err := Add([]Message{withID(Human("Hello"), "1")}, updates...)
		if !errors.Is(err, ErrUnknownID) {
			t.Errorf("Add(%v): error %v, want ErrUnknownID", updates, err)
		}
	}
}

func TestAdd_InvalidUpdateFails(t *testing.T) {
	t.Parallel()
	for _, u := range []Message{{Type: "robot"}, {Type: TypeTool, Content: Text("x")}, {Type: TypeRemove}} {
		if _, err := Add(nil, u); err == nil {
			t.Errorf("Add(%#v) succeeded", u)
		}
	}
}

// TestAdd_MissingIDsDerivedDeterministically: LangGraph's test_missing_ids, except that the
// IDs are name-based (version 5) UUIDs, the same on every call, and distinct.
func TestAdd_MissingIDsDerivedDeterministically(t *testing.T) {
	t.Parallel()
	list := []Message{Human("Hello")}
	updates := []Message{AI("Hi there!"), AI("Hi there!"), Human("Hello")}
	got, err := Add(list, updates...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d messages, want 4", len(got))
	}
	seen := map[string]bool{}
	for _, m := range got {
		u, err := uuid.Parse(m.ID)
		if err != nil || u.Version() != 5 {
			t.Errorf("id %q is not a name-based UUID (%v)", m.ID, err)
		}
		if seen[m.ID] {
			t.Errorf("id %q given twice", m.ID)
		}
		seen[m.ID] = true
	}
	again, err := Add(list, updates...)
	if err != nil || !reflect.DeepEqual(got, again) {
		t.Errorf("second Add gave %#v (%v), first %#v", again, err, got)
	}
	// Merging the result again keeps the IDs: what Add stored is stable under replay.
	twice, err := Add(got)
	if err != nil || !reflect.DeepEqual(twice, got) {
		t.Errorf("Add of its own result gave %#v (%v)", twice, err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func texts(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var ms []Message
	if err := json.Unmarshal(raw, &ms); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Type + ":" + m.Text()
	}
	return out
}

// TestAddMessages_Join: at a fan-out's join each branch's new messages are merged in branch
// order, its replacements and Remove markers applied.
func TestAddMessages_Join(t *testing.T) {
	t.Parallel()
	h := withID(Human("question"), "h")
	base := mustJSON(t, []Message{h})
	tests := []struct {
		name    string
		base    json.RawMessage
		updates []json.RawMessage
		want    []string
	}{
		{"branches append in order", base, []json.RawMessage{
			mustJSON(t, []Message{h, withID(AI("from a"), "a")}),
			mustJSON(t, []Message{h, withID(AI("from b"), "b")}),
		}, []string{"human:question", "ai:from a", "ai:from b"}},
		{"a branch of only new messages", base, []json.RawMessage{
			mustJSON(t, []Message{withID(AI("only new"), "n")}),
		}, []string{"human:question", "ai:only new"}},
		{"a branch replaces, another removes", base, []json.RawMessage{
			mustJSON(t, []Message{withID(Human("rephrased"), "h"), withID(AI("x"), "x")}),
			mustJSON(t, []Message{Remove("x")}),
		}, []string{"human:rephrased"}},
		{"a later branch wins an ID", base, []json.RawMessage{
			mustJSON(t, []Message{h, withID(AI("first"), "same")}),
			mustJSON(t, []Message{h, withID(AI("second"), "same")}),
		}, []string{"human:question", "ai:second"}},
		{"remove all", base, []json.RawMessage{
			mustJSON(t, []Message{h, withID(AI("a"), "a")}),
			mustJSON(t, []Message{Remove(RemoveAll), withID(System("fresh"), "s")}),
		}, []string{"system:fresh"}},
		{"OpenAI dicts before the fan-out match the branch's messages", json.RawMessage(`[{"role":"user","content":"hi","id":"h"}]`),
			[]json.RawMessage{mustJSON(t, []Message{withID(Human("hi"), "h"), withID(AI("hello"), "a")})},
			[]string{"human:hi", "ai:hello"}},
		{"messages without IDs match after Add gave them", json.RawMessage(`[["user","hi"]]`),
			[]json.RawMessage{func() json.RawMessage {
				ms, err := Add([]Message{Human("hi")}, AI("hello"))
				if err != nil {
					t.Fatal(err)
				}
				return mustJSON(t, ms)
			}()}, []string{"human:hi", "ai:hello"}},
		{"null base", json.RawMessage(`null`), []json.RawMessage{mustJSON(t, []Message{h})}, []string{"human:question"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := AddMessages.Reduce(tt.base, tt.updates)
			if err != nil {
				t.Fatal(err)
			}
			if g := texts(t, got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("got %q, want %q", g, tt.want)
			}
		})
	}
}

func TestAddMessages_Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		base    json.RawMessage
		updates []json.RawMessage
		want    error
	}{
		{"unknown id", json.RawMessage(`[]`), []json.RawMessage{mustJSON(t, []Message{Remove("nope")})}, ErrUnknownID},
		{"base not a list", json.RawMessage(`{}`), nil, nil},
		{"update not a message", json.RawMessage(`[]`), []json.RawMessage{json.RawMessage(`[1]`)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := AddMessages.Reduce(tt.base, tt.updates)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
}
