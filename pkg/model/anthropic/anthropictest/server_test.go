package anthropictest_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/model/anthropic/anthropictest"
)

// post sends body to srv with the key and version headers given (empty: left out).
func post(t *testing.T, srv *anthropictest.Server, key, version, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if version != "" {
		req.Header.Set("anthropic-version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const hello = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`

func TestServer_Rejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		key, version, body string
		status             int
		errType, says      string
	}{
		"no key":      {"", "2026-10-21", hello, 401, "authentication_error", "x-api-key"},
		"wrong key":   {"nope", "2026-10-21", hello, 401, "authentication_error", "x-api-key"},
		"no version":  {anthropictest.APIKey, "", hello, 400, "invalid_request_error", "anthropic-version"},
		"no max":      {anthropictest.APIKey, "2026-10-21", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens"},
		"temperature": {anthropictest.APIKey, "2026-10-21", `{"model":"m","max_tokens":1,"temperature":1,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "temperature"},
		"empty text":  {anthropictest.APIKey, "2026-10-21", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, 400, "invalid_request_error", "non-empty"},
		"unanswered tool_use": {anthropictest.APIKey, "2026-10-21", `{"model":"m","max_tokens":1,"messages":[
			{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
			{"role":"user","content":"and?"}]}`, 400, "invalid_request_error", "t1"},
		"tool_result after text": {anthropictest.APIKey, "2026-10-21", `{"model":"m","max_tokens":1,"messages":[
			{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t1"}]}]}`, 400, "invalid_request_error", "first"},
	} {
		srv := anthropictest.NewServer(anthropictest.Text("unused"))
		defer srv.Close()
		resp := post(t, srv, tc.key, tc.version, tc.body)
		var body struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.status || body.Type != "error" || body.Error.Type != tc.errType || !strings.Contains(body.Error.Message, tc.says) {
			t.Errorf("%s: %d %+v, want %d %s saying %q", name, resp.StatusCode, body, tc.status, tc.errType, tc.says)
		}
		if reqs := srv.Requests(); srv.Count() != 1 || reqs[0].Rejected == "" || srv.Answered() != 0 {
			t.Errorf("%s: count %d, answered %d, rejected %q", name, srv.Count(), srv.Answered(), reqs[0].Rejected)
		}
	}
}

func TestServer_RepliesInOrderThenFails(t *testing.T) {
	t.Parallel()
	srv := anthropictest.NewServer(anthropictest.Text("one"), anthropictest.Error(529))
	defer srv.Close()
	for i, want := range []int{200, 529, 500} {
		if resp := post(t, srv, anthropictest.APIKey, "2023-06-01", hello); resp.StatusCode != want {
			t.Errorf("request %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if srv.Count() != 3 || srv.Answered() != 2 {
		t.Errorf("count %d, answered %d", srv.Count(), srv.Answered())
	}
	if r := srv.Requests()[0]; r.Model != "m" || *r.MaxTokens != 10 || r.Messages[0].Content[0].Text != "hi" {
		t.Errorf("decoded %+v", r)
	}
}

func TestServer_StreamEvents(t *testing.T) {
	t.Parallel()
	srv := anthropictest.NewServer(anthropictest.Reply{Chunk: 2, Content: []anthropictest.Block{
		anthropictest.TextBlock("abcde"), anthropictest.ToolUse("t1", "f", `{"a":1}`)}})
	defer srv.Close()
	resp := post(t, srv, anthropictest.APIKey, "2026-10-21", `{"stream":true,`+hello[1:])
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, ev)
		}
	}
	want := "message_start ping " +
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_delta content_block_stop " +
		"message_delta message_stop"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
}
