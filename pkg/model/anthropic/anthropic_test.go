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

// newModel returns a model on a fake server scripted with replies.
func newModel(t *testing.T, cfg anthropic.Config, replies ...anthropictest.Reply) (*anthropic.Model, *anthropictest.Server) {
	t.Helper()
	srv := anthropictest.NewServer(replies...)
	t.Cleanup(srv.Close)
	if cfg.APIKey == "" {
		cfg.APIKey = anthropictest.APIKey
	}
	cfg.BaseURL = srv.URL
	m, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}

// only returns the one request srv was sent.
func only(t *testing.T, srv *anthropictest.Server) anthropictest.Request {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1", len(reqs))
	}
	if reqs[0].Rejected != "" {
		t.Fatalf("the server rejected the request: %s", reqs[0].Rejected)
	}
	return reqs[0]
}

func jsonEqual(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func TestModel_Generate_Text(t *testing.T) {
	t.Parallel()
	temp := 0.2
	m, srv := newModel(t, anthropic.Config{Model: "claude-test"}, anthropictest.Text("Hello there."))
	resp, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}, Temperature: &temp})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message.Text(); got != "Hello there." {
		t.Errorf("text = %q", got)
	}
	if resp.Message.Type != message.TypeAI || resp.StopReason != model.StopEnd || resp.Model != "claude-test" {
		t.Errorf("type, stop, model = %q, %q, %q", resp.Message.Type, resp.StopReason, resp.Model)
	}
	if resp.Message.Content.IsParts() {
		t.Errorf("content of a text reply is parts: %v", resp.Message.Content.PartList())
	}
	req := only(t, srv)
	if req.Model != "claude-test" || req.MaxTokens == nil || *req.MaxTokens != anthropic.DefaultMaxTokens || req.Stream {
		t.Errorf("model, max_tokens, stream = %q, %v, %v", req.Model, req.MaxTokens, req.Stream)
	}
	if got := req.Header.Get("Anthropic-Version"); got != "2026-10-21" {
		t.Errorf("anthropic-version = %q", got)
	}
	if req.System != nil || len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Content[0].Text != "hi" {
		t.Errorf("system, messages = %v, %+v", req.System, req.Messages)
	}
	for _, k := range []string{`"temperature"`, `"tool_choice"`, `"tools"`, `"output_config"`} {
		if strings.Contains(string(req.Body), k) {
			t.Errorf("body has %s: %s", k, req.Body)
		}
	}
}

func TestModel_Generate_MaxTokens(t *testing.T) {
	t.Parallel()
	m, srv := newModel(t, anthropic.Config{MaxTokens: 100}, anthropictest.Text("a"), anthropictest.Text("b"))
	for _, n := range []int64{0, 7} {
		if _, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}, MaxTokens: n}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if *reqs[0].MaxTokens != 100 || *reqs[1].MaxTokens != 7 || reqs[0].Model != anthropic.DefaultModel {
		t.Errorf("max_tokens = %d, %d; model %q", *reqs[0].MaxTokens, *reqs[1].MaxTokens, reqs[0].Model)
	}
}

var weather = model.ToolDef{
	Name: "get_weather", Description: "The weather in a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`),
}

func TestModel_Generate_ToolCalls(t *testing.T) {
	t.Parallel()
	reply := anthropictest.Reply{Content: []anthropictest.Block{
		anthropictest.TextBlock("Let me look."),
		anthropictest.ToolUse("toolu_1", "get_weather", `{"city":"Paris"}`),
		anthropictest.ToolUse("toolu_2", "get_weather", `{"city":"Oslo"}`),
	}}
	for _, stream := range []bool{false, true} {
		m, srv := newModel(t, anthropic.Config{}, reply)
		req := model.Request{Messages: []message.Message{message.Human("weather?")}, Tools: []model.ToolDef{weather}}
		if stream {
			req.OnText = func(string) error { return nil }
		}
		resp, err := m.Generate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Message.ToolCalls
		if resp.StopReason != model.StopToolCalls || len(calls) != 2 || resp.Message.Text() != "Let me look." {
			t.Fatalf("stream=%v: stop %q, calls %+v, text %q", stream, resp.StopReason, calls, resp.Message.Text())
		}
		if calls[0].ID != "toolu_1" || calls[0].Name != "get_weather" || calls[1].ID != "toolu_2" {
			t.Errorf("calls = %+v", calls)
		}
		jsonEqual(t, "args", calls[0].Args, json.RawMessage(`{"city":"Paris"}`))
		jsonEqual(t, "args", calls[1].Args, json.RawMessage(`{"city":"Oslo"}`))
		if err := resp.Message.Validate(); err != nil {
			t.Error(err)
		}
		sent := only(t, srv)
		if len(sent.Tools) != 1 {
			t.Fatalf("tools = %s", sent.Tools)
		}
		jsonEqual(t, "tool", sent.Tools[0], json.RawMessage(`{"name":"get_weather","description":"The weather in a city.",
			"input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}`))
	}
}

func TestModel_Generate_ToolChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ choice, want string }{
		{"", ""},
		{"auto", ""},
		{"required", `{"type":"any"}`},
		{"none", `{"type":"none"}`},
		{"get_weather", `{"type":"tool","name":"get_weather"}`},
	} {
		m, srv := newModel(t, anthropic.Config{}, anthropictest.Text("ok"))
		_, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")},
			Tools: []model.ToolDef{weather}, ToolChoice: tc.choice})
		if err != nil {
			t.Fatal(err)
		}
		got := only(t, srv).ToolChoice
		if tc.want == "" {
			if got != nil {
				t.Errorf("choice %q: tool_choice = %s, want none sent", tc.choice, got)
			}
			continue
		}
		jsonEqual(t, "tool_choice "+tc.choice, got, json.RawMessage(tc.want))
	}
}

func TestModel_Generate_ToolResultRoundTrip(t *testing.T) {
	t.Parallel()
	paris := message.ToolCall{ID: "toolu_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}
	oslo := message.ToolCall{ID: "toolu_2", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}
	msgs := []message.Message{
		message.System("You answer about the weather."),
		message.Human("Paris and Oslo?"),
		message.AI("Let me look.", paris, oslo),
		message.ToolResult(paris, "sunny, 21 C"),
		message.ToolError(oslo, "the weather service is down"),
		message.Human("Be brief."),
	}
	m, srv := newModel(t, anthropic.Config{}, anthropictest.Text("Paris is sunny; Oslo I could not look up."))
	if _, err := m.Generate(t.Context(), model.Request{Messages: msgs, Tools: []model.ToolDef{weather}}); err != nil {
		t.Fatal(err)
	}
	req := only(t, srv)
	if len(req.System) != 1 || req.System[0].Text != "You answer about the weather." {
		t.Errorf("system = %+v", req.System)
	}
	if len(req.Messages) != 3 {
		t.Fatalf("messages = %+v, want user, assistant, user", req.Messages)
	}
	jsonEqual(t, "assistant turn", raw(t, req.Messages[1]), json.RawMessage(`{"role":"assistant","content":[
		{"type":"text","text":"Let me look."},
		{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},
		{"type":"tool_use","id":"toolu_2","name":"get_weather","input":{"city":"Oslo"}}]}`))
	jsonEqual(t, "user turn", raw(t, req.Messages[2]), json.RawMessage(`{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny, 21 C"}]},
		{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"the weather service is down"}]},
		{"type":"text","text":"Be brief."}]}`))
}

// An AI message of another vendor with a call it could not parse goes as a tool_use with an
// empty input, so that the error tool_result answering it names a call of the turn.
func TestModel_Generate_UnparsableCallOfAnotherVendor(t *testing.T) {
	t.Parallel()
	ai := message.AI("")
	ai.InvalidToolCalls = []message.InvalidToolCall{{ID: "call_cut", Name: "get_weather", Args: `{"city":"Par`, Error: "cut"}}
	msgs := []message.Message{message.Human("Paris?"), ai,
		message.ToolError(message.ToolCall{ID: "call_cut", Name: "get_weather"}, "Error: cut")}
	m, srv := newModel(t, anthropic.Config{}, anthropictest.Text("Sorry."))
	if _, err := m.Generate(t.Context(), model.Request{Messages: msgs, Tools: []model.ToolDef{weather}}); err != nil {
		t.Fatal(err)
	}
	req := only(t, srv)
	if len(req.Messages) != 3 {
		t.Fatalf("messages = %+v, want user, assistant, user", req.Messages)
	}
	jsonEqual(t, "assistant turn", raw(t, req.Messages[1]), json.RawMessage(`{"role":"assistant","content":[
		{"type":"tool_use","id":"call_cut","name":"get_weather","input":{}}]}`))
}

// raw returns a request message as the JSON of its role and blocks.
func raw(t *testing.T, m anthropictest.InMessage) json.RawMessage {
	t.Helper()
	blocks := make([]json.RawMessage, len(m.Content))
	for i, b := range m.Content {
		blocks[i] = b.Raw
	}
	out, err := json.Marshal(map[string]any{"role": m.Role, "content": blocks})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestModel_Generate_SystemMessagesGoToTheSystemParameter(t *testing.T) {
	t.Parallel()
	m, srv := newModel(t, anthropic.Config{}, anthropictest.Text("ok"))
	msgs := []message.Message{
		message.System("First rule."), message.Human("hi"), message.AI("hello"),
		message.System("Second rule."), message.Human("again"),
	}
	if _, err := m.Generate(t.Context(), model.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	req := only(t, srv)
	if len(req.System) != 2 || req.System[0].Text != "First rule." || req.System[1].Text != "Second rule." {
		t.Errorf("system = %+v", req.System)
	}
	roles := []string{}
	for _, msg := range req.Messages {
		roles = append(roles, msg.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user" {
		t.Errorf("roles = %v", roles)
	}
}

func TestModel_Generate_Usage(t *testing.T) {
	t.Parallel()
	reply := anthropictest.Text("cached answer")
	reply.Usage = anthropictest.Usage{InputTokens: 10, OutputTokens: 7, CacheReadInputTokens: 100, CacheCreationInputTokens: 5}
	want := message.Usage{InputTokens: 115, OutputTokens: 7, CachedInputTokens: 100}
	for _, stream := range []bool{false, true} {
		m, _ := newModel(t, anthropic.Config{}, reply)
		req := model.Request{Messages: []message.Message{message.Human("hi")}}
		if stream {
			req.OnText = func(string) error { return nil }
		}
		resp, err := m.Generate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage != want || resp.Message.Usage == nil || *resp.Message.Usage != want {
			t.Errorf("stream=%v: usage = %+v, message usage %+v, want %+v", stream, resp.Usage, resp.Message.Usage, want)
		}
	}
}

func TestModel_Generate_StopReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ reason, want string }{
		{"end_turn", model.StopEnd},
		{"stop_sequence", model.StopEnd},
		{"pause_turn", model.StopEnd},
		{"tool_use", model.StopToolCalls},
		{"max_tokens", model.StopLength},
		{"model_context_window_exceeded", model.StopLength},
		{"refusal", ""},
	} {
		for _, stream := range []bool{false, true} {
			reply := anthropictest.Text("partial")
			reply.StopReason = tc.reason
			if tc.reason == "refusal" {
				reply.Refusal = "not this one"
			}
			m, _ := newModel(t, anthropic.Config{}, reply)
			req := model.Request{Messages: []message.Message{message.Human("hi")}}
			if stream {
				req.OnText = func(string) error { return nil }
			}
			resp, err := m.Generate(t.Context(), req)
			if tc.want == "" {
				if !errors.Is(err, model.ErrRefused) || !strings.Contains(err.Error(), "not this one") {
					t.Errorf("%s stream=%v: err = %v, want ErrRefused with the explanation", tc.reason, stream, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tc.want || resp.Message.ResponseMetadata["stop_reason"] != tc.reason {
				t.Errorf("%s stream=%v: stop = %q (metadata %v), want %q", tc.reason, stream, resp.StopReason,
					resp.Message.ResponseMetadata["stop_reason"], tc.want)
			}
		}
	}
}

func TestModel_Generate_StructuredOutput(t *testing.T) {
	t.Parallel()
	m, srv := newModel(t, anthropic.Config{}, anthropictest.Text(`{"city":"Paris","celsius":21}`))
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"celsius":{"type":"number"}},"required":["city","celsius"],"additionalProperties":false}`)
	resp, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("weather in Paris")},
		Output: &model.OutputSchema{Name: "weather", Schema: schema}})
	if err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, "reply", json.RawMessage(resp.Message.Text()), json.RawMessage(`{"city":"Paris","celsius":21}`))
	jsonEqual(t, "output_config", only(t, srv).OutputConfig,
		json.RawMessage(`{"format":{"type":"json_schema","schema":`+string(schema)+`}}`))
}

func TestModel_Generate_BadRequestsFailBeforeTheCall(t *testing.T) {
	t.Parallel()
	for name, req := range map[string]model.Request{
		"output schema not an object": {Messages: []message.Message{message.Human("hi")}, Output: &model.OutputSchema{Name: "x", Schema: json.RawMessage(`[]`)}},
		"tool parameters not an object": {Messages: []message.Message{message.Human("hi")},
			Tools: []model.ToolDef{{Name: "t", Parameters: json.RawMessage(`"x"`)}}},
		"unknown part": {Messages: []message.Message{{Type: message.TypeHuman,
			Content: message.Parts(message.Part{Type: "hologram", Raw: json.RawMessage(`{"type":"hologram"}`)})}}},
		"remove marker": {Messages: []message.Message{message.Remove("x")}},
	} {
		m, srv := newModel(t, anthropic.Config{})
		if _, err := m.Generate(t.Context(), req); err == nil {
			t.Errorf("%s: no error", name)
		}
		if srv.Count() != 0 {
			t.Errorf("%s: %d requests sent", name, srv.Count())
		}
	}
}
