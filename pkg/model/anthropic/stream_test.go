package anthropic_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic/anthropictest"
)

// generate asks m with msgs, streamed when pieces is not nil (each piece appended to it).
func generate(t *testing.T, m *anthropic.Model, msgs []message.Message, pieces *[]string) model.Response {
	t.Helper()
	req := model.Request{Messages: msgs, Tools: []model.ToolDef{weather}}
	if pieces != nil {
		req.OnText = func(s string) error { *pieces = append(*pieces, s); return nil }
	}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestModel_Generate_StreamEqualsTheUnstreamedReply(t *testing.T) {
	t.Parallel()
	for name, reply := range map[string]anthropictest.Reply{
		"text": {Content: []anthropictest.Block{anthropictest.TextBlock("The weather in Paris is sunny, 21 °C — enjoy it.")}, Chunk: 5},
		"text and tools": {Content: []anthropictest.Block{
			anthropictest.TextBlock("Looking up both."),
			anthropictest.ToolUse("toolu_1", "get_weather", `{"city": "Paris", "days": [1, 2, 3], "note": "a \"quoted\" word"}`),
			anthropictest.ToolUse("toolu_2", "get_weather", `{"city":"Oslo"}`),
		}, Chunk: 3, Usage: anthropictest.Usage{InputTokens: 20, OutputTokens: 30, CacheReadInputTokens: 4}},
		"thinking": {Content: []anthropictest.Block{
			{Type: "thinking", Thinking: "The user wants the weather; call the tool.", Signature: "c2lnbmF0dXJl"},
			anthropictest.TextBlock("One moment."),
			anthropictest.ToolUse("toolu_1", "get_weather", `{"city":"Paris"}`),
		}},
	} {
		m, srv := newModel(t, anthropic.Config{}, reply, reply)
		msgs := []message.Message{message.Human("weather?")}
		plain := generate(t, m, msgs, nil)
		var pieces []string
		streamed := generate(t, m, msgs, &pieces)
		if reqs := srv.Requests(); !reqs[1].Stream || reqs[0].Stream {
			t.Fatalf("%s: stream flags = %v, %v", name, reqs[0].Stream, reqs[1].Stream)
		}
		var want []string
		for _, b := range reply.Content {
			if b.Type == "text" {
				want = append(want, chunks(b.Text, reply.Chunk)...)
			}
		}
		if !reflect.DeepEqual(pieces, want) {
			t.Errorf("%s: pieces = %q, want %q", name, pieces, want)
		}
		if strings.Join(pieces, "") != streamed.Message.Text() {
			t.Errorf("%s: pieces %q do not join to the text %q", name, pieces, streamed.Message.Text())
		}
		delete(plain.Message.ResponseMetadata, "id") // msg_test_1, msg_test_2
		delete(streamed.Message.ResponseMetadata, "id")
		if !reflect.DeepEqual(canonical(t, streamed), canonical(t, plain)) {
			t.Errorf("%s: streamed reply\n%+v\nwant the unstreamed one\n%+v", name, streamed, plain)
		}
	}
}

// chunks splits s as the fake streams it: n runes a piece (0: 4).
func chunks(s string, n int) []string {
	if n == 0 {
		n = 4
	}
	var out []string
	rs := []rune(s)
	for len(rs) > n {
		out, rs = append(out, string(rs[:n])), rs[n:]
	}
	return append(out, string(rs))
}

// canonical returns a response with its JSON (tool arguments, content parts) re-encoded,
// so that two replies that differ only in white space compare equal.
func canonical(t *testing.T, r model.Response) model.Response {
	t.Helper()
	for i, c := range r.Message.ToolCalls {
		r.Message.ToolCalls[i].Args = reencode(t, c.Args)
	}
	if r.Message.Content.IsParts() {
		ps := r.Message.Content.PartList()
		for i := range ps {
			if ps[i].Raw != nil {
				ps[i].Raw = reencode(t, ps[i].Raw)
			}
		}
	}
	return r
}

func reencode(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	out, _ := json.Marshal(v)
	return out
}

func TestModel_Generate_ThinkingGoesBackWithTheTurn(t *testing.T) {
	t.Parallel()
	reply := anthropictest.Reply{Content: []anthropictest.Block{
		{Type: "thinking", Thinking: "Call the tool.", Signature: "sig-1"},
		anthropictest.TextBlock("One moment."),
		anthropictest.ToolUse("toolu_1", "get_weather", `{"city":"Paris"}`),
	}}
	m, srv := newModel(t, anthropic.Config{}, reply, anthropictest.Text("Sunny."))
	msgs := []message.Message{message.Human("weather?")}
	first := generate(t, m, msgs, nil)
	if got := first.Message.Text(); got != "One moment." {
		t.Errorf("text = %q", got)
	}
	if ps := first.Message.Content.PartList(); len(ps) != 2 || ps[0].Type != "thinking" || ps[1].Text != "One moment." {
		t.Fatalf("parts = %+v", ps)
	}
	msgs = append(msgs, first.Message, message.ToolResult(first.Message.ToolCalls[0], "sunny"))
	generate(t, m, msgs, nil)
	sent := srv.Requests()[1]
	if sent.Rejected != "" {
		t.Fatal(sent.Rejected)
	}
	jsonEqual(t, "assistant turn", raw(t, sent.Messages[1]), json.RawMessage(`{"role":"assistant","content":[
		{"type":"thinking","thinking":"Call the tool.","signature":"sig-1"},
		{"type":"text","text":"One moment."},
		{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]}`))
}

func TestModel_Generate_OnTextErrorEndsTheCall(t *testing.T) {
	t.Parallel()
	stop := errors.New("client gone")
	m, srv := newModel(t, anthropic.Config{}, anthropictest.Text("a long enough reply"))
	n := 0
	_, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")},
		OnText: func(string) error { n++; return stop }})
	if !errors.Is(err, stop) || n != 1 || srv.Count() != 1 {
		t.Errorf("err = %v after %d pieces, %d requests; want OnText's error after 1", err, n, srv.Count())
	}
}

func TestModel_Generate_Images(t *testing.T) {
	t.Parallel()
	m, srv := newModel(t, anthropic.Config{}, anthropictest.Text("A cat."))
	part := func(s string) message.Part {
		var p message.Part
		if err := p.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	human := message.Message{Type: message.TypeHuman, Content: message.Parts(
		message.TextPart("What are these?"),
		part(`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}`),
		part(`{"type":"image_url","image_url":"https://example.com/cat.jpg"}`),
		part(`{"type":"image","source_type":"base64","data":"R0lGOD","mime_type":"image/gif"}`),
		part(`{"type":"image","source":{"type":"url","url":"https://example.com/dog.webp"}}`),
	)}
	if _, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{human}}); err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, "user turn", raw(t, only(t, srv).Messages[0]), json.RawMessage(`{"role":"user","content":[
		{"type":"text","text":"What are these?"},
		{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
		{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},
		{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGOD"}},
		{"type":"image","source":{"type":"url","url":"https://example.com/dog.webp"}}]}`))
}
