package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/openai"
	"github.com/funcgraph/funcgraph/pkg/model/openai/openaitest"
)

// newModel returns a model on the fake s.
func newModel(t *testing.T, s *openaitest.Server) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{APIKey: "sk-test", BaseURL: s.BaseURL(), Model: "gpt-test", HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// collect returns an OnText that appends the pieces it gets.
func collect(pieces *[]string) func(string) error {
	var mu sync.Mutex
	return func(s string) error {
		mu.Lock()
		defer mu.Unlock()
		*pieces = append(*pieces, s)
		return nil
	}
}

func TestModel_Generate_Text(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "Hello there.", Usage: openaitest.Usage{PromptTokens: 12, CompletionTokens: 3, CachedTokens: 8}})
	defer s.Close()
	s.Key = "sk-test"
	temp := 0.5
	resp, err := newModel(t, s).Generate(t.Context(), model.Request{
		Messages:    []message.Message{message.System("Be brief."), message.Human("Hi")},
		MaxTokens:   100,
		Temperature: &temp,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message.Text(); got != "Hello there." || resp.Message.Type != message.TypeAI {
		t.Errorf("reply = %s %q, want ai %q", resp.Message.Type, got, "Hello there.")
	}
	want := message.Usage{InputTokens: 12, OutputTokens: 3, CachedInputTokens: 8}
	if resp.Usage != want || resp.Message.Usage == nil || *resp.Message.Usage != want {
		t.Errorf("usage = %+v (message %+v), want %+v", resp.Usage, resp.Message.Usage, want)
	}
	if resp.StopReason != model.StopEnd || resp.Model != "gpt-test" {
		t.Errorf("stop, model = %q, %q; want %q, gpt-test", resp.StopReason, resp.Model, model.StopEnd)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
	}
	b := r.Body
	if b.Model != "gpt-test" || len(b.Messages) != 2 || b.Messages[0].Role != "system" || b.Messages[1].Role != "user" ||
		b.Messages[1].Text() != "Hi" || b.Stream {
		t.Errorf("body = %s", r.Raw)
	}
	if b.MaxCompletionTokens == nil || *b.MaxCompletionTokens != 100 || b.MaxTokens != nil || b.Temperature == nil || *b.Temperature != 0.5 {
		t.Errorf("limits in body = %s", r.Raw)
	}
	if b.Tools != nil || b.ToolChoice != nil || b.ResponseFormat != nil {
		t.Errorf("no tools or format asked, body = %s", r.Raw)
	}
}

// weather is a tool definition of the tests.
var weather = model.ToolDef{Name: "get_weather", Description: "The weather in a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func TestModel_Generate_ToolCallsAndResults(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "call_b", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
		}},
		openaitest.Reply{Text: "Sunny in Paris, snow in Oslo."},
	)
	defer s.Close()
	m := newModel(t, s)
	msgs := []message.Message{message.Human("Weather in Paris and Oslo?")}
	resp, err := m.Generate(t.Context(), model.Request{Messages: msgs, Tools: []model.ToolDef{weather}, ToolChoice: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if resp.StopReason != model.StopToolCalls || len(calls) != 2 || calls[0].ID != "call_a" || calls[0].Name != "get_weather" ||
		string(calls[0].Args) != `{"city":"Paris"}` || calls[1].ID != "call_b" {
		t.Fatalf("reply = %+v, stop %q", resp.Message, resp.StopReason)
	}
	if err := resp.Message.Validate(); err != nil {
		t.Errorf("reply does not validate: %v", err)
	}
	r := s.Requests()[0]
	var tool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if len(r.Body.Tools) != 1 || json.Unmarshal(r.Body.Tools[0], &tool) != nil || tool.Type != "function" ||
		tool.Function.Name != "get_weather" || tool.Function.Description != weather.Description ||
		!jsonEqual(t, tool.Function.Parameters, weather.Parameters) {
		t.Errorf("tools = %s", r.Raw)
	}
	if string(r.Body.ToolChoice) != `"auto"` {
		t.Errorf("tool_choice = %s, want \"auto\"", r.Body.ToolChoice)
	}

	msgs = append(msgs, resp.Message, message.ToolResult(calls[0], "sunny"), message.ToolError(calls[1], "snow"))
	resp, err = m.Generate(t.Context(), model.Request{Messages: msgs, Tools: []model.ToolDef{weather}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "Sunny in Paris, snow in Oslo." || resp.StopReason != model.StopEnd {
		t.Errorf("reply = %q, stop %q", resp.Message.Text(), resp.StopReason)
	}
	sent := s.Requests()[1].Body.Messages
	if len(sent) != 4 {
		t.Fatalf("%d messages sent, want 4: %s", len(sent), s.Requests()[1].Raw)
	}
	ai, res1, res2 := sent[1], sent[2], sent[3]
	if ai.Role != "assistant" || len(ai.ToolCalls) != 2 || ai.ToolCalls[0].ID != "call_a" || ai.ToolCalls[0].Type != "function" ||
		ai.ToolCalls[0].Function.Name != "get_weather" || ai.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Errorf("assistant message sent = %+v", ai)
	}
	if ai.Content != nil {
		t.Errorf("assistant message with tool calls and no text has content %s", ai.Content)
	}
	if res1.Role != "tool" || res1.ToolCallID != "call_a" || res1.Text() != "sunny" || res2.ToolCallID != "call_b" || res2.Text() != "snow" {
		t.Errorf("tool results sent = %+v, %+v", res1, res2)
	}
}

func TestModel_Generate_ToolChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ choice, want string }{
		{"", ""},
		{"auto", `"auto"`},
		{"required", `"required"`},
		{"none", `"none"`},
		{"get_weather", `{"type":"function","function":{"name":"get_weather"}}`},
	} {
		t.Run(tc.choice, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(openaitest.Reply{Text: "ok"})
			defer s.Close()
			if _, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")},
				Tools: []model.ToolDef{weather}, ToolChoice: tc.choice}); err != nil {
				t.Fatal(err)
			}
			got := s.Requests()[0].Body.ToolChoice
			if tc.want == "" && got != nil || tc.want != "" && !jsonEqual(t, got, json.RawMessage(tc.want)) {
				t.Errorf("tool_choice = %s, want %s", got, tc.want)
			}
			if tc.choice != "auto" && tc.choice != "none" {
				return
			}
			// Without tools, "auto" and "none" are what the model does anyway: none is sent,
			// as the API refuses a tool_choice without tools.
			s.Add(openaitest.Reply{Text: "ok"})
			if _, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}, ToolChoice: tc.choice}); err != nil {
				t.Fatal(err)
			}
			if got := s.Requests()[1].Body.ToolChoice; got != nil {
				t.Errorf("without tools, tool_choice = %s, want none sent", got)
			}
		})
	}
}

func TestModel_Generate_NamedToolStopsForToolCalls(t *testing.T) {
	t.Parallel()
	// The API says "stop" when tool_choice names the tool.
	s := openaitest.NewServer(openaitest.Reply{FinishReason: "stop",
		ToolCalls: []openaitest.ToolCall{{Name: "get_weather", Arguments: `{"city":"Rome"}`}}})
	defer s.Close()
	resp, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")},
		Tools: []model.ToolDef{weather}, ToolChoice: "get_weather"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != model.StopToolCalls || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("stop = %q with %d calls, want %q", resp.StopReason, len(resp.Message.ToolCalls), model.StopToolCalls)
	}
}

// generateTwice asks m req without streaming, then streaming, and returns both replies and
// the pieces of the streamed one.
func generateTwice(t *testing.T, m *openai.Model, req model.Request) (plain, streamed model.Response, pieces []string) {
	t.Helper()
	plain, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.OnText = collect(&pieces)
	streamed, err = m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return plain, streamed, pieces
}

func TestModel_Generate_StreamEqualsUnstreamed(t *testing.T) {
	t.Parallel()
	reply := openaitest.Reply{Text: "The quick brown fox.", Usage: openaitest.Usage{PromptTokens: 20, CompletionTokens: 5, CachedTokens: 16}}
	s := openaitest.NewServer(reply, reply)
	defer s.Close()
	plain, streamed, pieces := generateTwice(t, newModel(t, s), model.Request{Messages: []message.Message{message.Human("Say it.")}})
	if want := openaitest.SplitWords(reply.Text); strings.Join(pieces, "|") != strings.Join(want, "|") {
		t.Errorf("pieces = %q, want %q", pieces, want)
	}
	plain.Message.ID, streamed.Message.ID = "", "" // each completion has its own ID
	if !responsesEqual(t, plain, streamed) {
		t.Errorf("streamed = %+v\nplain    = %+v", streamed, plain)
	}
	r := s.Requests()[1]
	if !r.Body.Stream || r.Body.StreamOptions == nil || !r.Body.StreamOptions.IncludeUsage {
		t.Errorf("streamed request = %s, want stream with include_usage", r.Raw)
	}
}

func TestModel_Generate_StreamAssemblesToolCallDeltas(t *testing.T) {
	t.Parallel()
	args := `{"city":"Paris","units":"metric","days":3}`
	reply := openaitest.Reply{Text: "Checking.", ToolCalls: []openaitest.ToolCall{
		{ID: "call_x", Name: "get_weather", Arguments: args},
		{ID: "call_y", Name: "get_time", Arguments: `{"tz":"Europe/Paris"}`},
	}, Usage: openaitest.Usage{PromptTokens: 30, CompletionTokens: 9}}
	s := openaitest.NewServer(reply, reply)
	defer s.Close()
	plain, streamed, pieces := generateTwice(t, newModel(t, s),
		model.Request{Messages: []message.Message{message.Human("Weather and time in Paris?")}, Tools: []model.ToolDef{weather}})
	calls := streamed.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "call_x" || string(calls[0].Args) != args || calls[1].Name != "get_time" ||
		string(calls[1].Args) != `{"tz":"Europe/Paris"}` {
		t.Fatalf("streamed tool calls = %+v", calls)
	}
	if strings.Join(pieces, "") != "Checking." || streamed.StopReason != model.StopToolCalls {
		t.Errorf("pieces %q, stop %q", pieces, streamed.StopReason)
	}
	plain.Message.ID, streamed.Message.ID = "", ""
	if !responsesEqual(t, plain, streamed) {
		t.Errorf("streamed = %+v\nplain    = %+v", streamed, plain)
	}
}

func TestModel_Generate_OnTextErrorEndsTheCall(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "one two three"})
	defer s.Close()
	stop := errors.New("client gone")
	n := 0
	_, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")},
		OnText: func(string) error { n++; return stop }})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err = %v after %d pieces, want %v after 1", err, n, stop)
	}
}

func TestModel_Generate_StructuredOutput(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: `{"city":"Paris","temp":21}`})
	defer s.Close()
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}},"required":["city","temp"],"additionalProperties":false}`)
	resp, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")},
		Output: &model.OutputSchema{Name: "forecast", Schema: schema}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != `{"city":"Paris","temp":21}` {
		t.Errorf("reply = %q", resp.Message.Text())
	}
	want := `{"type":"json_schema","json_schema":{"name":"forecast","strict":true,"schema":` + string(schema) + `}}`
	if got := s.Requests()[0].Body.ResponseFormat; !jsonEqual(t, got, json.RawMessage(want)) {
		t.Errorf("response_format = %s\nwant %s", got, want)
	}
}

func TestModel_Generate_ImageParts(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "A cat."})
	defer s.Close()
	human := message.Message{Type: message.TypeHuman, Content: message.Parts(
		message.TextPart("What is this?"),
		message.Part{Type: "image_url", Raw: json.RawMessage(`{"type":"image_url","image_url":{"url":"https://example.com/cat.png","detail":"low"}}`)},
		message.Part{Type: "image_url", Raw: json.RawMessage(`{"type":"image_url","image_url":"https://example.com/dog.png"}`)},
		message.Part{Type: "image", Raw: json.RawMessage(`{"type":"image","base64":"AAAA","mime_type":"image/png"}`)},
	)}
	if _, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{human}}); err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"text","text":"What is this?"},
		{"type":"image_url","image_url":{"url":"https://example.com/cat.png","detail":"low"}},
		{"type":"image_url","image_url":{"url":"https://example.com/dog.png"}},
		{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]`
	if got := s.Requests()[0].Body.Messages[0].Content; !jsonEqual(t, got, json.RawMessage(want)) {
		t.Errorf("content = %s\nwant %s", got, want)
	}
}

func TestModel_Generate_AIMessageOfAnotherVendor(t *testing.T) {
	t.Parallel()
	// A reply of Claude with its thinking kept as a part, asking for a tool: its text and
	// its tool call are sent, its thinking is not.
	call := message.ToolCall{ID: "toolu_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}
	claude := message.Message{Type: message.TypeAI, ToolCalls: []message.ToolCall{call}, Content: message.Parts(
		message.Part{Type: "thinking", Raw: json.RawMessage(`{"type":"thinking","thinking":"Oslo, so weather.","signature":"sig"}`)},
		message.TextPart("Let me check."),
	)}
	s := openaitest.NewServer(openaitest.Reply{Text: "Snow."})
	defer s.Close()
	msgs := []message.Message{message.Human("Weather in Oslo?"), claude, message.ToolResult(call, "snow")}
	if _, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: msgs, Tools: []model.ToolDef{weather}}); err != nil {
		t.Fatal(err)
	}
	ai := s.Requests()[0].Body.Messages[1]
	if ai.Role != "assistant" || string(ai.Content) != `"Let me check."` || len(ai.ToolCalls) != 1 || ai.ToolCalls[0].ID != "toolu_1" {
		t.Errorf("assistant message sent = %+v (content %s)", ai, ai.Content)
	}
}

func TestModel_Generate_RejectsWhatTheAPICannotCarry(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer()
	defer s.Close()
	m := newModel(t, s)
	for name, msg := range map[string]message.Message{
		"unknown type":        {Type: "critic", Content: message.Text("x")},
		"image in system":     {Type: message.TypeSystem, Content: message.Parts(message.Part{Type: "image_url", Raw: json.RawMessage(`{"type":"image_url","image_url":"u"}`)})},
		"tool without a call": {Type: message.TypeTool, Content: message.Text("x")},
		"unknown part":        {Type: message.TypeHuman, Content: message.Parts(message.Part{Type: "video", Raw: json.RawMessage(`{"type":"video"}`)})},
	} {
		if _, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{msg}}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := s.Count(); n != 0 {
		t.Errorf("%d requests sent for messages the API cannot carry", n)
	}
}

func TestModel_Generate_Refusals(t *testing.T) {
	t.Parallel()
	for name, reply := range map[string]openaitest.Reply{
		"refusal":        {Refusal: "I can't help with that."},
		"content filter": {Text: "partial", FinishReason: "content_filter"},
		"prompt filter":  {Status: http.StatusBadRequest, Error: &openaitest.Error{Message: "filtered", Type: "invalid_request_error", Code: "content_filter"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(reply, reply)
			defer s.Close()
			m := newModel(t, s)
			req := model.Request{Messages: []message.Message{message.Human("hi")}}
			if _, err := m.Generate(t.Context(), req); !errors.Is(err, model.ErrRefused) {
				t.Errorf("err = %v, want ErrRefused", err)
			}
			req.OnText = func(string) error { return nil }
			if _, err := m.Generate(t.Context(), req); !errors.Is(err, model.ErrRefused) {
				t.Errorf("streamed: err = %v, want ErrRefused", err)
			}
		})
	}
}

func TestModel_Generate_VendorErrorsAndNoRetry(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError} {
		for _, stream := range []bool{false, true} {
			t.Run(http.StatusText(status)+map[bool]string{true: " streamed"}[stream], func(t *testing.T) {
				t.Parallel()
				s := openaitest.NewServer(
					openaitest.Reply{Status: status, Error: &openaitest.Error{Message: "try later", Type: "server_error", Code: "busy"}},
					openaitest.Reply{Text: "a retry would get this"},
				)
				defer s.Close()
				req := model.Request{Messages: []message.Message{message.Human("hi")}}
				if stream {
					req.OnText = func(string) error { return nil }
				}
				_, err := newModel(t, s).Generate(t.Context(), req)
				var apiErr *sdk.Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Code != "busy" {
					t.Fatalf("err = %v, want an *openai.Error %d", err, status)
				}
				if errors.Is(err, model.ErrRefused) {
					t.Errorf("err = %v is ErrRefused", err)
				}
				if n := s.Count(); n != 1 {
					t.Errorf("requested %d times, want exactly once (no SDK retry)", n)
				}
			})
		}
	}
}

func TestModel_Generate_StreamFailsMidway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code    string
		refused bool
	}{{"server_error", false}, {"content_filter", true}} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(openaitest.Reply{Text: "one two", StreamError: &openaitest.Error{Message: "boom", Type: "server_error", Code: tc.code}})
			defer s.Close()
			var pieces []string
			_, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}, OnText: collect(&pieces)})
			var streamErr *ssestream.StreamError
			if !errors.As(err, &streamErr) || errors.Is(err, model.ErrRefused) != tc.refused {
				t.Errorf("err = %v, want a *ssestream.StreamError, refused %v", err, tc.refused)
			}
			if strings.Join(pieces, "") != "one two" || s.Count() != 1 {
				t.Errorf("pieces %q in %d requests, want the text before the error in 1", pieces, s.Count())
			}
		})
	}
}

func TestModel_Generate_StreamCutIsNoReply(t *testing.T) {
	t.Parallel()
	// A connection that ends mid-reply, with no error event and no [DONE]: the text that
	// came is streamed, but the call fails rather than return it as the whole reply.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Half", " a reply"} {
			_, _ = fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
		}
	}))
	defer srv.Close()
	m, err := openai.New(openai.Config{APIKey: "k", BaseURL: srv.URL + "/v1/", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	_, err = m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}, OnText: collect(&pieces)})
	if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Join(pieces, "") != "Half a reply" {
		t.Errorf("err = %v after %q, want io.ErrUnexpectedEOF", err, pieces)
	}
}

func TestModel_Generate_MaxRetries(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Status: http.StatusInternalServerError}, openaitest.Reply{Text: "second time"})
	defer s.Close()
	m, err := openai.New(openai.Config{APIKey: "k", BaseURL: s.BaseURL(), Model: "gpt-test", MaxRetries: 1, HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}})
	if err != nil || resp.Message.Text() != "second time" || s.Count() != 2 {
		t.Errorf("reply %q, err %v, %d requests; want the second reply after 2", resp.Message.Text(), err, s.Count())
	}
}

func TestModel_Generate_DefaultMaxTokens(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "a"}, openaitest.Reply{Text: "b"})
	defer s.Close()
	m, err := openai.New(openai.Config{APIKey: "k", BaseURL: s.BaseURL(), Model: "gpt-test", MaxTokens: 256, HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{0, 10} {
		if _, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}, MaxTokens: n}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := s.Requests()
	if got := reqs[0].Body.MaxCompletionTokens; got == nil || *got != 256 {
		t.Errorf("default max tokens sent = %v, want 256", got)
	}
	if got := reqs[1].Body.MaxCompletionTokens; got == nil || *got != 10 {
		t.Errorf("request's max tokens sent = %v, want 10", got)
	}
}

func TestModel_Generate_Length(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "cut", FinishReason: "length"})
	defer s.Close()
	resp, err := newModel(t, s).Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}})
	if err != nil || resp.StopReason != model.StopLength {
		t.Errorf("stop = %q, err %v; want %q", resp.StopReason, err, model.StopLength)
	}
}

func TestModel_Generate_InvalidToolCallsAreKept(t *testing.T) {
	t.Parallel()
	// A reply cut at its length mid-arguments, beside a call that is whole and one whose
	// arguments are JSON but no object: the reply is returned, the bad calls kept apart.
	reply := openaitest.Reply{FinishReason: "length", ToolCalls: []openaitest.ToolCall{
		{ID: "call_ok", Name: "get_weather", Arguments: `{"city":"Rome"}`},
		{ID: "call_list", Name: "get_weather", Arguments: `["Rome"]`},
		{ID: "call_cut", Name: "get_weather", Arguments: `{"city":"Par`},
	}}
	s := openaitest.NewServer(reply, reply, openaitest.Reply{Text: "ok"})
	defer s.Close()
	m := newModel(t, s)
	plain, streamed, _ := generateTwice(t, m, model.Request{Messages: []message.Message{message.Human("hi")}, Tools: []model.ToolDef{weather}})
	for name, resp := range map[string]model.Response{"plain": plain, "streamed": streamed} {
		msg := resp.Message
		if resp.StopReason != model.StopLength || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "call_ok" {
			t.Errorf("%s: stop %q, tool calls %+v", name, resp.StopReason, msg.ToolCalls)
		}
		bad := msg.InvalidToolCalls
		if len(bad) != 2 || bad[0].ID != "call_list" || bad[0].Args != `["Rome"]` || bad[1].ID != "call_cut" ||
			bad[1].Name != "get_weather" || bad[1].Args != `{"city":"Par` || bad[1].Error == "" {
			t.Errorf("%s: invalid tool calls %+v", name, bad)
		}
		if err := msg.Validate(); err != nil {
			t.Errorf("%s: reply does not validate: %v", name, err)
		}
	}
	// Sent back, the bad calls are calls of the assistant message as the model wrote them,
	// so that the error tool messages answering them name calls the API knows.
	msg, bad := plain.Message, plain.Message.InvalidToolCalls
	msgs := []message.Message{message.Human("hi"), msg, message.ToolResult(msg.ToolCalls[0], "sunny"),
		message.ToolError(message.ToolCall{ID: bad[0].ID, Name: bad[0].Name}, "Error: not an object"),
		message.ToolError(message.ToolCall{ID: bad[1].ID, Name: bad[1].Name}, "Error: cut")}
	if _, err := m.Generate(t.Context(), model.Request{Messages: msgs, Tools: []model.ToolDef{weather}}); err != nil {
		t.Fatal(err)
	}
	ai := s.Requests()[2].Body.Messages[1]
	if len(ai.ToolCalls) != 3 || ai.ToolCalls[1].ID != "call_list" || ai.ToolCalls[1].Function.Arguments != `["Rome"]` ||
		ai.ToolCalls[2].ID != "call_cut" || ai.ToolCalls[2].Function.Arguments != `{"city":"Par` {
		t.Errorf("assistant message sent = %+v", ai)
	}
}

func TestNewAzure_APIKey(t *testing.T) {
	t.Parallel()
	s := openaitest.NewTLSServer(openaitest.Reply{Text: "from azure", Model: "gpt-4o-2024-08-06"})
	defer s.Close()
	s.Key = "azure-key"
	m, err := openai.NewAzure(openai.AzureConfig{Endpoint: s.URL(), APIKey: "azure-key", Deployment: "my-gpt", HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "from azure" || resp.Model != "gpt-4o-2024-08-06" {
		t.Errorf("reply %q from %q", resp.Message.Text(), resp.Model)
	}
	r := s.Requests()[0]
	if r.Path != "/openai/deployments/my-gpt/chat/completions" || r.APIVersion != openai.DefaultAzureAPIVersion ||
		r.Header.Get("Api-Key") != "azure-key" || r.Header.Get("Authorization") != "" {
		t.Errorf("request %s?%s, api-key %q, authorization %q", r.Path, r.Query.Encode(), r.Header.Get("Api-Key"), r.Header.Get("Authorization"))
	}
}

func TestNewAzure_StreamSkipsFilterAnnotations(t *testing.T) {
	t.Parallel()
	// Azure's stream carries content-filter annotations with no id (openaitest sends them on
	// the Azure path); the streamed reply is still the one not streamed.
	reply := openaitest.Reply{Text: "Checking the weather.", ToolCalls: []openaitest.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
		Usage: openaitest.Usage{PromptTokens: 30, CompletionTokens: 9, CachedTokens: 10}}
	s := openaitest.NewTLSServer(reply, reply)
	defer s.Close()
	m, err := openai.NewAzure(openai.AzureConfig{Endpoint: s.URL(), APIKey: "k", Deployment: "dep", HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	plain, streamed, pieces := generateTwice(t, m, model.Request{Messages: []message.Message{message.Human("hi")}, Tools: []model.ToolDef{weather}})
	if strings.Join(pieces, "") != reply.Text || len(streamed.Message.ToolCalls) != 1 || streamed.Usage.CachedInputTokens != 10 {
		t.Errorf("pieces %q, streamed %+v", pieces, streamed)
	}
	plain.Message.ID, streamed.Message.ID = "", ""
	if !responsesEqual(t, plain, streamed) {
		t.Errorf("streamed = %+v\nplain    = %+v", streamed, plain)
	}
}

// fakeCredential is an azcore.TokenCredential that hands out a fixed token and counts the
// scopes it was asked for.
type fakeCredential struct {
	mu     sync.Mutex
	scopes []string
}

func (c *fakeCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scopes = append(c.scopes, opts.Scopes...)
	return azcore.AccessToken{Token: "entra-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func TestNewAzure_TokenCredential(t *testing.T) {
	t.Parallel()
	s := openaitest.NewTLSServer(openaitest.Reply{Text: "hello"}, openaitest.Reply{Text: "streamed hello"})
	defer s.Close()
	s.Key = "entra-token"
	cred := &fakeCredential{}
	m, err := openai.NewAzure(openai.AzureConfig{Endpoint: s.URL() + "/", Credential: cred, Deployment: "dep",
		APIVersion: "2025-01-01-preview", HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}}); err != nil {
		t.Fatal(err)
	}
	var pieces []string
	resp, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}, OnText: collect(&pieces)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "streamed hello" || strings.Join(pieces, "") != "streamed hello" {
		t.Errorf("streamed reply %q in %q", resp.Message.Text(), pieces)
	}
	for _, r := range s.Requests() {
		if r.Path != "/openai/deployments/dep/chat/completions" || r.APIVersion != "2025-01-01-preview" ||
			r.Header.Get("Authorization") != "Bearer entra-token" || r.Header.Get("Api-Key") != "" {
			t.Errorf("request %s?%s, authorization %q, api-key %q", r.Path, r.Query.Encode(), r.Header.Get("Authorization"), r.Header.Get("Api-Key"))
		}
	}
	cred.mu.Lock()
	defer cred.mu.Unlock()
	if len(cred.scopes) == 0 || cred.scopes[0] != "https://cognitiveservices.azure.com/.default" {
		t.Errorf("token scopes = %q", cred.scopes)
	}
}

func TestNewAzure_NoRetryByDefault(t *testing.T) {
	t.Parallel()
	s := openaitest.NewTLSServer(openaitest.Reply{Status: http.StatusInternalServerError}, openaitest.Reply{Text: "retried"})
	defer s.Close()
	m, err := openai.NewAzure(openai.AzureConfig{Endpoint: s.URL(), Credential: &fakeCredential{}, Deployment: "dep", HTTPClient: s.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}})
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError || s.Count() != 1 {
		t.Errorf("err = %v after %d requests, want a 500 after exactly 1", err, s.Count())
	}
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]openai.Config{
		"no key":           {Model: "m"},
		"no model":         {APIKey: "k"},
		"negative retries": {APIKey: "k", Model: "m", MaxRetries: -1},
		"negative tokens":  {APIKey: "k", Model: "m", MaxTokens: -1},
	} {
		if _, err := openai.New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for name, cfg := range map[string]openai.AzureConfig{
		"no endpoint":      {APIKey: "k", Deployment: "d"},
		"no deployment":    {Endpoint: "https://x", APIKey: "k"},
		"no credential":    {Endpoint: "https://x", Deployment: "d"},
		"two credentials":  {Endpoint: "https://x", Deployment: "d", APIKey: "k", Credential: &fakeCredential{}},
		"negative retries": {Endpoint: "https://x", Deployment: "d", APIKey: "k", MaxRetries: -2},
	} {
		if _, err := openai.NewAzure(cfg); err == nil {
			t.Errorf("azure %s: no error", name)
		}
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Logf("not JSON: %s", a)
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("want is not JSON: %s", b)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// responsesEqual reports whether two responses are the same, compared as JSON.
func responsesEqual(t *testing.T, a, b model.Response) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

func TestNewAzure_PlainHTTPLoopbackWithSDKOption(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "over http"})
	defer s.Close()
	cfg := openai.AzureConfig{Endpoint: s.URL(), APIKey: "k", Deployment: "dep"}
	m, err := openai.NewAzure(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}}); err == nil || s.Count() != 0 {
		t.Fatalf("a key over plain HTTP: err %v after %d requests, want the SDK's refusal before any", err, s.Count())
	}
	cfg.Options = []option.RequestOption{azure.WithUnsafeAllowHTTP()}
	if m, err = openai.NewAzure(cfg); err != nil {
		t.Fatal(err)
	}
	resp, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}})
	if err != nil || resp.Message.Text() != "over http" || s.Count() != 1 {
		t.Errorf("reply %q, err %v, %d requests", resp.Message.Text(), err, s.Count())
	}
}
