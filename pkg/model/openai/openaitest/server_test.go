package openaitest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/model/openai/openaitest"
)

// post sends body to the server's path and returns the status and the body of the answer.
func post(t *testing.T, s *openaitest.Server, path string, header http.Header, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServer_Stream_SSEWithToolDeltasAndUsage(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "a b", ToolCalls: []openaitest.ToolCall{{Name: "f", Arguments: `{"x":12345}`}},
		Usage: openaitest.Usage{PromptTokens: 7, CompletionTokens: 3, CachedTokens: 5}})
	defer s.Close()
	status, body := post(t, s, "/v1/chat/completions", nil,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	chunks := sse(t, body)
	var text, args strings.Builder
	argChunks := 0
	for _, c := range chunks[:len(chunks)-1] {
		for _, ch := range c["choices"].([]any) {
			d := ch.(map[string]any)["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				text.WriteString(s)
			}
			for _, tc := range asList(d["tool_calls"]) {
				if a := tc.(map[string]any)["function"].(map[string]any)["arguments"].(string); a != "" {
					args.WriteString(a)
					argChunks++
				}
			}
		}
	}
	if text.String() != "a b" || args.String() != `{"x":12345}` || argChunks < 2 {
		t.Errorf("text %q, arguments %q in %d chunks", text.String(), args.String(), argChunks)
	}
	last := chunks[len(chunks)-1]
	u, _ := last["usage"].(map[string]any)
	if len(last["choices"].([]any)) != 0 || u["prompt_tokens"] != 7.0 || u["prompt_tokens_details"].(map[string]any)["cached_tokens"] != 5.0 {
		t.Errorf("last chunk = %v, want the usage with no choice", last)
	}
	if r := s.Requests(); len(r) != 1 || !r[0].Body.Stream || r[0].Body.Messages[0].Text() != "hi" {
		t.Errorf("requests = %+v", r)
	}
}

// sse returns the chunks of a stream's body, which must end with data: [DONE].
func sse(t *testing.T, body string) []map[string]any {
	t.Helper()
	var chunks []map[string]any
	done := false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || done {
			t.Fatalf("unexpected line %q (after [DONE]: %v)", line, done)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		chunks = append(chunks, c)
	}
	if !done {
		t.Fatal("no [DONE]")
	}
	return chunks
}

func TestServer_Stream_AzureAnnotations(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "a b"})
	defer s.Close()
	status, body := post(t, s, "/openai/deployments/d/chat/completions?api-version=2024-10-21", nil,
		`{"model":"d","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	chunks := sse(t, body)
	first, last := chunks[0], chunks[len(chunks)-1]
	if first["id"] != "" || len(first["choices"].([]any)) != 0 || first["prompt_filter_results"] == nil {
		t.Errorf("first chunk = %v, want the prompt's filter results with no id", first)
	}
	choice, _ := asList(last["choices"])[0].(map[string]any)
	if last["id"] != "" || choice["delta"] != nil || choice["content_filter_offsets"] == nil {
		t.Errorf("last chunk = %v, want the reply's filter results with no id and no delta", last)
	}
	for _, c := range chunks[1 : len(chunks)-1] {
		if c["id"] != "chatcmpl-test-1" {
			t.Errorf("chunk of the reply = %v, want id chatcmpl-test-1", c)
		}
	}
}

// asList returns v as a list, nil when it is not one.
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestServer_Routes(t *testing.T) {
	t.Parallel()
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		name   string
		key    string
		path   string
		header http.Header
		want   int
	}{
		{"openai", "", "/v1/chat/completions", nil, http.StatusOK},
		{"azure", "", "/openai/deployments/d/chat/completions?api-version=2024-10-21", nil, http.StatusOK},
		{"azure without api-version", "", "/openai/deployments/d/chat/completions", nil, http.StatusBadRequest},
		{"unknown path", "", "/v1/embeddings", nil, http.StatusNotFound},
		{"bearer key", "k", "/v1/chat/completions", http.Header{"Authorization": {"Bearer k"}}, http.StatusOK},
		{"api-key", "k", "/openai/deployments/d/chat/completions?api-version=v", http.Header{"Api-Key": {"k"}}, http.StatusOK},
		{"wrong key", "k", "/v1/chat/completions", http.Header{"Authorization": {"Bearer x"}}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(openaitest.Reply{Text: "ok"})
			defer s.Close()
			s.Key = tc.key
			if status, got := post(t, s, tc.path, tc.header, body); status != tc.want {
				t.Errorf("status %d (%s), want %d", status, got, tc.want)
			}
		})
	}
}

func TestServer_ErrorsAndPastTheScript(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Status: http.StatusTooManyRequests,
		Error: &openaitest.Error{Message: "slow down", Type: "rate_limit_error", Code: "rate_limit_exceeded"}})
	defer s.Close()
	const body = `{"model":"m","messages":[]}`
	status, got := post(t, s, "/v1/chat/completions", nil, body)
	var e struct {
		Error openaitest.Error `json:"error"`
	}
	if status != http.StatusTooManyRequests || json.Unmarshal([]byte(got), &e) != nil || e.Error.Code != "rate_limit_exceeded" {
		t.Errorf("status %d, body %s", status, got)
	}
	if status, _ := post(t, s, "/v1/chat/completions", nil, body); status != http.StatusInternalServerError {
		t.Errorf("past the script: status %d, want 500", status)
	}
	if n := s.Count(); n != 2 {
		t.Errorf("count = %d, want 2 (requests past the script count too)", n)
	}
}

func TestServer_RejectedRequestTakesNoReply(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(openaitest.Reply{Text: "first"})
	defer s.Close()
	s.Key = "k"
	const body = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if status, _ := post(t, s, "/v1/chat/completions", http.Header{"Authorization": {"Bearer wrong"}}, body); status != http.StatusUnauthorized {
		t.Fatalf("wrong key: status %d", status)
	}
	if status, _ := post(t, s, "/v1/chat/completions", http.Header{"Authorization": {"Bearer k"}}, `{"model":`); status != http.StatusBadRequest {
		t.Fatalf("bad body: status %d", status)
	}
	status, got := post(t, s, "/v1/chat/completions", http.Header{"Authorization": {"Bearer k"}}, body)
	if status != http.StatusOK || !strings.Contains(got, `"first"`) {
		t.Errorf("status %d, body %s; want the first reply", status, got)
	}
	if n := s.Count(); n != 3 {
		t.Errorf("count = %d, want 3 (rejected requests are recorded)", n)
	}
}
