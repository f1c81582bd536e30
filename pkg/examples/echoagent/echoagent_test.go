package echoagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
)

func do(t *testing.T, tr funchosttest.Transport, method, path, body string) (int, string, string) {
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
	app, err := host.New(host.Options{Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(echoagent.New(echoagent.Options{MaxMessages: 4}), echoagent.Name, host.RegisterOptions{Description: "Echo"}); err != nil {
		t.Fatal(err)
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
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
			{"messages not a list is 422", "POST", "/api/graphs/echo_agent/invoke",
				`{"input":{"messages":"notalist"},"config":{"configurable":{"thread_id":"` + tid + `"}}}`, 422,
				`{"error":"error","detail":"Validation error: input.messages: Input should be a valid list of messages with string role and content"}`},
			{"messages not a list is 422 on stream too", "POST", "/api/graphs/echo_agent/stream",
				`{"input":{"messages":[{"role":1}]},"config":{"configurable":{"thread_id":"` + tid + `"}}}`, 422,
				`{"error":"error","detail":"Validation error: input.messages: Input should be a valid list of messages with string role and content"}`},
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

func invokeEcho(t *testing.T, g *echoagent.Graph, tid, content string) (echoagent.State, error) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"messages": []echoagent.Message{{Role: "user", Content: content}}})
	out, err := g.Invoke(t.Context(), host.Request{Input: in, Config: host.Config{ThreadID: tid}})
	if err != nil {
		return echoagent.State{}, err
	}
	return out.(echoagent.State), nil
}

func stateBytes(st echoagent.State) int {
	n := 0
	for _, m := range st.Messages {
		n += len(m.Role) + len(m.Content)
	}
	return n
}

// Item 6: one thread's memory stays within MaxThreadBytes (oldest messages dropped), a turn
// that alone exceeds it is refused, and all threads together stay within MaxTotalBytes (oldest
// threads forgotten).
func TestEchoAgent_ByteBudgets(t *testing.T) {
	const perThread, total = 1000, 3000
	g := echoagent.New(echoagent.Options{MaxThreadBytes: perThread, MaxTotalBytes: total})
	chunk := strings.Repeat("m", 200)
	for i := range 20 {
		st, err := invokeEcho(t, g, "t1", chunk)
		if err != nil {
			t.Fatal(err)
		}
		if n := stateBytes(st); n > perThread || (i > 5 && n < perThread/2) {
			t.Fatalf("turn %d: thread holds %d bytes, want at most %d (and the recent turns)", i, n, perThread)
		}
	}
	_, err := invokeEcho(t, g, "t1", strings.Repeat("b", perThread))
	var ie *host.InputError
	if !errors.As(err, &ie) || ie.Field != "input.messages" {
		t.Fatalf("oversized turn: err %v, want a host.InputError", err)
	}
	for i := range 10 {
		if _, err := invokeEcho(t, g, fmt.Sprintf("other-%d", i), strings.Repeat("o", 400)); err != nil {
			t.Fatal(err)
		}
	}
	sum := 0
	for _, tid := range append([]string{"t1"}, func() []string {
		var ids []string
		for i := range 10 {
			ids = append(ids, fmt.Sprintf("other-%d", i))
		}
		return ids
	}()...) {
		view, err := g.GetState(t.Context(), tid)
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := view.Values.(echoagent.State); ok {
			sum += stateBytes(st)
		}
	}
	if sum > total || sum == 0 {
		t.Errorf("all threads hold %d bytes, want 0 < n <= %d", sum, total)
	}
	if view, _ := g.GetState(t.Context(), "other-9"); view.Values == nil {
		t.Error("the newest thread was forgotten; want the oldest ones forgotten first")
	}
}
