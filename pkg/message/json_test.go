package message

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/encode")

// golden compares got (compact JSON) with the file at path, which holds it followed by a
// newline; with -update it writes the file instead.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	want := append(bytes.Clone(got), '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (go test -update writes it): %v", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s:\ngot  %s\nwant %s", path, got, b)
	}
}

// The expected JSON is what langchain-core 1.5.3 (the version langgraph's libs/langgraph/uv.lock
// pins) gives for model_dump() of the same message: the fields and their order are those of the
// messages' pydantic schemas (langgraph's tests/__snapshots__/test_large_cases.ambr records
// them for that version: no "example" field any more), nulls for an unset name and id, {} for
// additional_kwargs and response_metadata, ToolCall {"name", "args", "id", "type":
// "tool_call"}, InvalidToolCall {"type", "id", "name", "args", "error"}, ToolMessage's
// artifact null and status "success" by default, RemoveMessage with content "".
func TestMessage_MarshalJSON_AsLangChain(t *testing.T) {
	t.Parallel()
	call := ToolCall{ID: "call_1", Name: "search", Args: json.RawMessage(`{"q":"go"}`)}
	tests := []struct {
		name string
		m    Message
	}{
		{"human", Message{Type: TypeHuman, Content: Text("hi"), ID: "1"}},
		{"human named without id", Message{Type: TypeHuman, Content: Text("hi"), Name: "ann"}},
		{"human parts", Message{Type: TypeHuman, Content: Parts(TextPart("look"),
			Part{Type: "image_url", Raw: json.RawMessage(`{"type":"image_url","image_url":{"url":"https://x/y.png"}}`)}), ID: "1"}},
		{"system", System("be brief")},
		{"ai plain", Message{Type: TypeAI, Content: Text("hello"), ID: "run-1"}},
		{"ai tool calls usage", Message{Type: TypeAI, ID: "run-2", ToolCalls: []ToolCall{call},
			InvalidToolCalls: []InvalidToolCall{{ID: "call_2", Name: "fetch", Args: "{bad", Error: "Function fetch arguments are not valid JSON"}},
			Usage:            &Usage{InputTokens: 10, OutputTokens: 5, CachedInputTokens: 4},
			ResponseMetadata: map[string]any{"model_name": "gpt-4o", "finish_reason": "tool_calls"}}},
		{"ai usage without cache", Message{Type: TypeAI, Content: Text("x"), Usage: &Usage{InputTokens: 1, OutputTokens: 2}}},
		{"tool result", ToolResult(call, "3 hits")},
		{"tool error with artifact", func() Message {
			m := ToolError(call, "boom")
			m.Artifact = json.RawMessage(`{"trace":[1,2]}`)
			return m
		}()},
		{"tool status defaults", Message{Type: TypeTool, Content: Text("ok"), ToolCallID: "c"}},
		{"remove", Remove("7")},
		{"developer kept as LangChain keeps it", Message{Type: TypeSystem, Content: Text("rules"), AdditionalKwargs: map[string]any{"__openai_role__": "developer"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "encode", strings.ReplaceAll(tt.name, " ", "_")+".json"), got)
		})
	}
}

func TestMessage_UnmarshalJSON_AcceptedShapes(t *testing.T) {
	t.Parallel()
	search := ToolCall{ID: "call_1", Name: "search", Args: json.RawMessage(`{"q":"go"}`)}
	tests := []struct {
		name string
		in   string
		want Message
	}{
		{"bare string", `"hi"`, Human("hi")},
		{"pair user", `["user", "hi"]`, Human("hi")},
		{"pair human", `["human", "hi"]`, Human("hi")},
		{"pair assistant", `["assistant", "hello"]`, AI("hello")},
		{"pair ai", `["ai", "hello"]`, AI("hello")},
		{"pair system", `["system", "be brief"]`, System("be brief")},
		{"pair developer", `["developer", "rules"]`, Message{Type: TypeSystem, Content: Text("rules"), AdditionalKwargs: map[string]any{"__openai_role__": "developer"}}},
		{"pair with parts", `["user", [{"type":"text","text":"a"}]]`, Message{Type: TypeHuman, Content: Parts(TextPart("a"))}},
		{"openai user", `{"role":"user","content":"hi"}`, Human("hi")},
		{"openai system", `{"role":"system","content":"s"}`, System("s")},
		{"openai developer", `{"role":"developer","content":"d"}`, Message{Type: TypeSystem, Content: Text("d"), AdditionalKwargs: map[string]any{"__openai_role__": "developer"}}},
		{"openai assistant tool calls, content null", `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\": \"go\"}"}}]}`,
			Message{Type: TypeAI, ToolCalls: []ToolCall{search}}},
		{"openai arguments already an object", `{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"name":"search","arguments":{"q":"go"}}}]}`,
			Message{Type: TypeAI, ToolCalls: []ToolCall{search}}},
		{"openai arguments empty", `{"role":"assistant","content":"","tool_calls":[{"id":"c","function":{"name":"now","arguments":""}}]}`,
			Message{Type: TypeAI, ToolCalls: []ToolCall{{ID: "c", Name: "now", Args: json.RawMessage(`{}`)}}}},
		{"openai tool", `{"role":"tool","content":"3 hits","tool_call_id":"call_1"}`, Message{Type: TypeTool, Content: Text("3 hits"), ToolCallID: "call_1", Status: StatusSuccess}},
		{"openai extra keys join additional_kwargs", `{"role":"assistant","content":"x","refusal":null,"audio":{"id":"a"}}`,
			Message{Type: TypeAI, Content: Text("x"), AdditionalKwargs: map[string]any{"refusal": nil, "audio": map[string]any{"id": "a"}}}},
		{"role wins over type", `{"role":"user","type":"ai","content":"x"}`, Message{Type: TypeHuman, Content: Text("x"), AdditionalKwargs: map[string]any{"type": "ai"}}},
		{"langchain human", `{"content":"hi","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"1"}`, Message{Type: TypeHuman, Content: Text("hi"), ID: "1"}},
		{"langchain 0.3 human with example", `{"content":"hi","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"1","example":false}`, Message{Type: TypeHuman, Content: Text("hi"), ID: "1"}},
		{"langchain ai", `{"content":"","additional_kwargs":{"k":1},"response_metadata":{"model_name":"m"},"type":"ai","name":"bot","id":"run-2",` +
			`"tool_calls":[{"name":"search","args":{"q": "go"},"id":"call_1","type":"tool_call"}],` +
			`"invalid_tool_calls":[{"type":"invalid_tool_call","id":null,"name":"f","args":"{","error":null}],` +
			`"usage_metadata":{"input_tokens":10,"output_tokens":5,"total_tokens":15,"input_token_details":{"audio":0,"cache_read":4},"output_token_details":{"reasoning":1}}}`,
			Message{Type: TypeAI, ID: "run-2", Name: "bot", ToolCalls: []ToolCall{search}, InvalidToolCalls: []InvalidToolCall{{Name: "f", Args: "{"}},
				Usage: &Usage{InputTokens: 10, OutputTokens: 5, CachedInputTokens: 4}, AdditionalKwargs: map[string]any{"k": 1.0}, ResponseMetadata: map[string]any{"model_name": "m"}}},
		{"langchain tool call without id", `{"type":"ai","content":"","tool_calls":[{"name":"search","args":{"q":"go"},"id":null}]}`,
			Message{Type: TypeAI, ToolCalls: []ToolCall{{Name: "search", Args: json.RawMessage(`{"q":"go"}`)}}}},
		{"langchain tool", `{"content":"x","type":"tool","name":"search","id":null,"tool_call_id":"call_1","artifact":{"a":"<b>"},"status":"error"}`,
			Message{Type: TypeTool, Content: Text("x"), Name: "search", ToolCallID: "call_1", Artifact: json.RawMessage(`{"a":"\u003cb\u003e"}`), Status: StatusError}},
		{"remove", `{"type":"remove","id":"7","content":""}`, Remove("7")},
		{"remove all", `{"type":"remove","id":"__remove_all__","content":""}`, Remove(RemoveAll)},
		{"nested additional_kwargs win", `{"role":"user","content":"x","k":1,"additional_kwargs":{"k":2}}`, Message{Type: TypeHuman, Content: Text("x"), AdditionalKwargs: map[string]any{"k": 2.0}}},
		{"response_metadata beside role", `{"role":"assistant","content":"x","response_metadata":{"m":"n"}}`, Message{Type: TypeAI, Content: Text("x"), ResponseMetadata: map[string]any{"m": "n"}}},
		{"empty list content is empty text", `{"role":"user","content":[]}`, Human("")},
		{"text part with cache_control kept", `{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}`,
			Message{Type: TypeHuman, Content: Parts(Part{Type: "text", Text: "a", Raw: json.RawMessage(`{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}`)})}},
		{"bare string part kept", `{"role":"user","content":["a"]}`, Message{Type: TypeHuman, Content: Parts(Part{Type: "text", Text: "a", Raw: json.RawMessage(`"a"`)})}},
		{"serialized constructor", `{"lc":1,"type":"constructor","id":["langchain","schema","messages","AIMessageChunk"],"kwargs":{"content":"hi","id":"run-3","type":"AIMessageChunk","tool_call_chunks":[]}}`,
			Message{Type: TypeAI, Content: Text("hi"), ID: "run-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got Message
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestMessage_UnmarshalJSON_Rejected(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"number", `1`, "want an object, a string or a [role, content] pair"},
		{"null", `null`, "want an object"},
		{"empty", ``, "empty"},
		{"no role or type", `{"content":"x"}`, "needs a role (or type) and content"},
		{"no content", `{"role":"user"}`, "needs content"},
		{"remove without content", `{"type":"remove","id":"1"}`, "needs content"},
		{"unknown role", `{"role":"robot","content":"x"}`, `unknown role "robot"`},
		{"chunk type in a dict", `{"type":"AIMessageChunk","content":"x"}`, `unknown role "AIMessageChunk"`},
		{"function", `{"role":"function","name":"f","content":"x"}`, "function messages"},
		{"role not a string", `{"role":1,"content":"x"}`, "role must be a string"},
		{"tool without tool_call_id", `{"role":"tool","content":"x"}`, "tool_call_id required"},
		{"tool bad status", `{"role":"tool","content":"x","tool_call_id":"c","status":"ok"}`, `status "ok"`},
		{"remove without id", `{"type":"remove","content":""}`, "id required"},
		{"content an object", `{"role":"user","content":{"a":1}}`, "content must be a string or a list"},
		{"content part a number", `{"role":"user","content":[1]}`, "content part 0"},
		{"tool call args a string", `{"type":"ai","content":"","tool_calls":[{"name":"f","args":"{}","id":"c"}]}`, "args must be a JSON object"},
		{"tool call args missing", `{"type":"ai","content":"","tool_calls":[{"name":"f","id":"c"}]}`, "args must be a JSON object"},
		{"tool call without name", `{"type":"ai","content":"","tool_calls":[{"args":{},"id":"c"}]}`, "name required"},
		{"openai arguments not JSON", `{"role":"assistant","content":"","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{bad"}}]}`, "args must be a JSON object"},
		{"openai arguments a list", `{"role":"assistant","content":"","tool_calls":[{"id":"c","function":{"name":"f","arguments":"[1]"}}]}`, "args must be a JSON object"},
		{"pair of three", `["user","a","b"]`, "[role, content] pair"},
		{"pair tool", `["tool","x"]`, "cannot be a tool message"},
		{"pair remove", `["remove","x"]`, "cannot be a remove message"},
		{"pair unknown role", `["robot","x"]`, `unknown role "robot"`},
		{"id not a string", `{"role":"user","content":"x","id":5}`, "id must be a string"},
		{"usage not numbers", `{"type":"ai","content":"","usage_metadata":{"input_tokens":"1"}}`, "usage_metadata"},
		{"constructor of an unknown class", `{"lc":1,"type":"constructor","id":["x","Foo"],"kwargs":{}}`, "unknown message class"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var m Message
			err := json.Unmarshal([]byte(tt.in), &m)
			if tt.in == "" { // json.Unmarshal refuses empty input itself; call the method
				err = m.UnmarshalJSON(nil)
			}
			if err == nil {
				t.Fatalf("decoded %#v", m)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestMessage_RoundTrip: encode, decode, encode gives the same JSON and the same message.
func TestMessage_RoundTrip(t *testing.T) {
	t.Parallel()
	call := ToolCall{ID: "c", Name: "f", Args: json.RawMessage(`{"a":[1,{"b":"<&>"}]}`)}
	ms := []Message{
		Human("hi"), System("s"), AI("hello", call), ToolResult(call, "r"), ToolError(call, "e"), Remove("x"),
		{Type: TypeHuman, Content: Parts(TextPart("a"), Part{Type: "image_url", Raw: json.RawMessage(`{"type":"image_url","image_url":"u"}`)}), ID: "1", Name: "n"},
		{Type: TypeAI, ID: "2", Usage: &Usage{InputTokens: 3, OutputTokens: 4, CachedInputTokens: 1}, InvalidToolCalls: []InvalidToolCall{{ID: "i", Args: "{"}},
			ResponseMetadata: map[string]any{"stop": "end"}, AdditionalKwargs: map[string]any{"x": []any{1.0, "y"}}},
		{Type: TypeTool, ToolCallID: "c", Artifact: json.RawMessage(`[1,2]`), Content: Text("")},
	}
	for _, m := range ms {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var d Message // a message built in Go may hold JSON not yet canonical: decode it first
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if again, err := stable(d); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: re-encoded as %s (%v)", b, again, err)
		}
	}
}

// stable encodes m (a decoded message), decodes that and encodes again, and reports an error
// unless the decoded message equals m and both encodings are the same; it returns the encoding.
func stable(m Message) ([]byte, error) {
	b1, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%#v does not encode: %w", m, err)
	}
	var d Message
	if err := json.Unmarshal(b1, &d); err != nil {
		return nil, fmt.Errorf("%s does not decode: %w", b1, err)
	}
	if !reflect.DeepEqual(m, d) {
		return nil, fmt.Errorf("%#v encoded as %s, which decodes as %#v", m, b1, d)
	}
	b2, err := json.Marshal(d)
	if err != nil || !bytes.Equal(b1, b2) {
		return nil, fmt.Errorf("re-encoded %s as %s (%v)", b1, b2, err)
	}
	return b1, nil
}

// FuzzMessage_Decode: decoding never panics, and what decodes encodes, decodes to the same
// message and encodes to the same JSON.
func FuzzMessage_Decode(f *testing.F) {
	for _, s := range []string{
		`"hi"`, `["user","hi"]`, `["developer",[{"type":"text","text":"a"},"b"]]`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":\"<\"}"}}]}`,
		`{"content":"","additional_kwargs":{"k":1e400},"response_metadata":{},"type":"ai","name":null,"id":"r","tool_calls":[],"invalid_tool_calls":[{"id":null}],"usage_metadata":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`,
		`{"content":"x","type":"tool","tool_call_id":"c","artifact":{"a":"\u2028"},"status":"error"}`,
		`{"type":"remove","id":"__remove_all__","content":"z"}`,
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}},{"text":"no type"}],"extra":[1,"<"]}`,
		`{"lc":1,"type":"constructor","id":["langchain","schema","messages","ToolMessage"],"kwargs":{"content":"x","tool_call_id":"c"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := m.UnmarshalJSON(data); err != nil {
			return
		}
		if _, err := stable(m); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
	})
}

// TestMessage_GoldenFilesDecode: each golden encoding decodes and encodes back to itself.
func TestMessage_GoldenFilesDecode(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "encode", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		got, err := stable(m)
		if err != nil || !bytes.Equal(got, bytes.TrimSpace(b)) {
			t.Errorf("%s re-encoded as %s (%v)", f, got, err)
		}
	}
}

func TestUsage_MarshalJSON(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(Usage{InputTokens: 3, OutputTokens: 2, CachedInputTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"input_tokens":3,"output_tokens":2,"cached_input_tokens":1}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
