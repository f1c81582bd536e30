//go:build integration

package exampleapp_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/model/openai/openaitest"
)

// TestIntegrationAssistant_KilledAfterAModelReply_NeverPaysForItTwice runs the example app's
// assistant on the OpenAI adapter against a loopback server speaking the OpenAI API (which
// counts requests), two workers on Azurite. The model's first reply asks for an order lookup and
// a refund; the run waits for the refund's approval. The worker that committed that reply is
// killed with SIGKILL, between the reply and its tool calls; the other worker takes the
// approval (an edit of the amount): each tool call runs once, exactly the edited refund is
// issued, the reply is never requested again, and the usage totals the two replies.
func TestIntegrationAssistant_KilledAfterAModelReply_NeverPaysForItTwice(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(
		openaitest.Reply{Text: "Let me look that up and refund it.", ToolCalls: []openaitest.ToolCall{
			{ID: "call_lookup", Name: "lookup_order", Arguments: `{"order":"A100"}`},
			{ID: "call_refund", Name: "issue_refund", Arguments: `{"order":"A100","amount":70}`},
		}, Usage: openaitest.Usage{PromptTokens: 120, CompletionTokens: 30, CachedTokens: 100}},
		openaitest.Reply{Text: "Refunded 20 EUR for order A100.", Usage: openaitest.Usage{PromptTokens: 200, CompletionTokens: 10}},
	)
	t.Cleanup(srv.Close)
	f := newFleet(t, 2, "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_MODEL=gpt-test")
	rng := rand.New(rand.NewPCG(3, 3))
	on := func(i int, method, path, body string) (int, string) {
		t.Helper()
		// Worker i only: the test decides which worker takes what.
		saved := f.addrs
		f.addrs = []string{saved[i]}
		defer func() { f.addrs = saved }()
		code, b := f.do(rng, method, path, body, nil)
		return code, string(b)
	}
	f.kill(1) // worker 0 alone takes the start and the first model turn
	if code, body := on(0, "POST", "/api/graphs/assistant/runs", `{"instance_id":"kill-agent","input":{"messages":[{"role":"user","content":"Please refund order A100"}]}}`); code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	waitFor := func(i int, what string) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			_, body := on(i, "GET", "/api/runs/kill-agent", "")
			if strings.Contains(body, what) {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("run never showed %s: %s", what, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(0, `"waiting_for_event": "approval"`)
	if n := srv.Count(); n != 1 {
		t.Fatalf("%d model requests before the approval, want 1", n)
	}
	f.kill(0) // the worker that holds the committed reply dies; its tool calls have not run
	f.start(1)
	if code, body := on(1, "POST", "/api/runs/kill-agent/events/approval",
		`{"decisions":[{"type":"edit","tool_call_id":"call_refund","args":{"order":"A100","amount":20}}]}`); code != 202 {
		t.Fatalf("approval: %d %s", code, body)
	}
	body := waitFor(1, `"runtime_status": "Completed"`)
	var st struct {
		Output struct {
			State struct {
				Messages []struct {
					Type       string `json:"type"`
					Content    string `json:"content"`
					ToolCallID string `json:"tool_call_id"`
				} `json:"messages"`
				Usage struct {
					ModelCalls        int64 `json:"model_calls"`
					InputTokens       int64 `json:"input_tokens"`
					OutputTokens      int64 `json:"output_tokens"`
					CachedInputTokens int64 `json:"cached_input_tokens"`
				} `json:"usage"`
			} `json:"state"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range st.Output.State.Messages {
		got = append(got, m.Type+":"+m.ToolCallID)
	}
	if strings.Join(got, ",") != "human:,ai:,tool:call_lookup,tool:call_refund,ai:" {
		t.Fatalf("conversation %v", got)
	}
	if refund := st.Output.State.Messages[3].Content; !strings.HasPrefix(refund, "refunded 20 EUR for order A100") {
		t.Fatalf("the refund ran as %q, want the edited call", refund)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2: the committed reply was requested again", len(reqs))
	}
	if n := len(reqs[1].Body.Messages); n != 5 { // system, human, ai, two tool results
		t.Fatalf("second request holds %d messages", n)
	}
	if u := st.Output.State.Usage; u.ModelCalls != 2 || u.InputTokens != 320 || u.OutputTokens != 40 || u.CachedInputTokens != 100 {
		t.Fatalf("usage %+v", u)
	}
	// Each tool call ran once: no tool branch was executed again and dropped by the conditional
	// commit. (A dispatch step may run twice when a wake and the event's delivery meet; the
	// engine drops the second, and it calls neither the model nor a tool.)
	for _, again := range []string{"branch committed by another worker", "branch dropped"} {
		if n := f.count(again); n != 0 {
			t.Fatalf("%d tool branches executed again (%q)", n, again)
		}
	}
}
