package echoagent_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchost/hosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
)

func do(t *testing.T, tr hosttest.Transport, method, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, tr.BaseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-functions-key", tr.FunctionKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Content-Type")
}

func TestEchoAgent_Conversation_BothTransports(t *testing.T) {
	app, err := host.New(host.Options{Logger: hosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(echoagent.New(echoagent.Options{MaxMessages: 4}), echoagent.Name, host.RegisterOptions{Description: "Echo"}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range hosttest.Transports(t, app.FunctionApp()) {
		tid := "thread-" + tr.Name
		steps := []struct {
			name, method, path, body string
			status                   int
			want                     string
		}{
			{"unknown thread state is empty", "GET", "/api/graphs/echo_agent/threads/" + tid + "/state", "", 200,
				`{"values": {}, "next": [], "metadata": null}`},
			{"thread id required", "POST", "/api/graphs/echo_agent/invoke", `{"input":{"messages":[{"role":"user","content":"hi"}]}}`, 400,
				`{"error":"error","detail":"config.configurable.thread_id is required for checkpointed graphs"}`},
			{"first turn", "POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"thread_id":"` + tid + `"}}}`, 200,
				`{"output":{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hi"}]}}`},
			{"second turn streams one chunk per message", "POST", "/api/graphs/echo_agent/stream",
				`{"input":{"messages":[{"role":"user","content":"é?"}]},"config":{"configurable":{"thread_id":"` + tid + `"}}}`, 200,
				"event: data\ndata: {\"messages\": [{\"role\": \"user\", \"content\": \"\\u00e9?\"}]}\n\n" +
					"event: data\ndata: {\"messages\": [{\"role\": \"assistant\", \"content\": \"\\u00e9?\"}]}\n\nevent: end\ndata: {}\n\n"},
			{"state keeps history", "GET", "/api/graphs/echo_agent/threads/" + tid + "/state", "", 200,
				`{"values": {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hi"}, ` +
					`{"role": "user", "content": "\u00e9?"}, {"role": "assistant", "content": "\u00e9?"}]}, "next": [], "metadata": {"source": "loop", "step": 2}}`},
			{"history trimmed to MaxMessages", "POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":[]},"config":{"configurable":{"thread_id":"` + tid + `"}}}`, 200,
				`{"output":{"messages":[{"role":"assistant","content":"hi"},{"role":"user","content":"é?"},{"role":"assistant","content":"é?"},{"role":"assistant","content":""}]}}`},
			{"unknown stream mode fails in band", "POST", "/api/graphs/echo_agent/stream",
				`{"input":{"messages":[]},"stream_mode":"debug","config":{"configurable":{"thread_id":"` + tid + `"}}}`, 200,
				"event: error\ndata: {\"error\": \"stream processing failed\"}\n\nevent: end\ndata: {}\n\n"},
			{"bad input is a graph failure", "POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":"hi"},"config":{"configurable":{"thread_id":"` + tid + `"}}}`, 500,
				`{"error":"error","detail":"Graph execution failed"}`},
		}
		for _, s := range steps {
			status, body, _ := do(t, tr, s.method, s.path, s.body)
			if status != s.status || body != s.want {
				t.Fatalf("%s/%s: %d %s\nwant %d %s", tr.Name, s.name, status, body, s.status, s.want)
			}
		}
	}
}

func TestEchoAgent_MaxThreads_ForgetsOldest(t *testing.T) {
	g := echoagent.New(echoagent.Options{MaxThreads: 2})
	ctx := t.Context()
	for _, tid := range []string{"a", "b", "c"} {
		if _, err := g.Invoke(ctx, host.Request{Input: []byte(`{"messages":[{"role":"user","content":"x"}]}`), Config: host.Config{ThreadID: tid}}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		tid      string
		wantMsgs int
	}{{"a", 0}, {"b", 2}, {"c", 2}}
	for _, tt := range tests {
		view, err := g.GetState(ctx, tt.tid)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if st, ok := view.Values.(echoagent.State); ok {
			n = len(st.Messages)
		}
		if n != tt.wantMsgs {
			t.Errorf("thread %s: %d messages, want %d", tt.tid, n, tt.wantMsgs)
		}
	}
}
