package exampleapp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/exampleapp/assistantmodel"
	"github.com/funcgraph/funcgraph/pkg/model/openai/openaitest"
)

// TestAssistant_RunsAPI drives the example agent on its built-in model through the runs API
// on both transports: a refund request looks the order up, waits for approval on the exact
// refund call, runs it once approved and answers; the usage is summed in the final state.
func TestAssistant_RunsAPI(t *testing.T) {
	for _, tr := range memoryApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			id := "assistant-" + tr.Name
			code, body := do(t, tr, "POST", "/api/graphs/assistant/runs",
				`{"instance_id":"`+id+`","input":{"messages":[{"role":"user","content":"Please refund order A100"}]}}`)
			if code != 202 {
				t.Fatalf("start: %d %s", code, body)
			}
			status := func(done func(string) bool) map[string]any {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for {
					code, body := do(t, tr, "GET", "/api/runs/"+id, "")
					if code == 200 && done(body) {
						var m map[string]any
						if err := json.Unmarshal([]byte(body), &m); err != nil {
							t.Fatal(err)
						}
						return m
					}
					if time.Now().After(deadline) {
						t.Fatalf("status: %d %s", code, body)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			status(func(b string) bool { return strings.Contains(b, `"waiting_for_event": "approval"`) })
			hist := func() string {
				_, b := do(t, tr, "GET", "/api/runs/"+id+"/history", "")
				return b
			}
			if h := hist(); !strings.Contains(h, `"pending_approval": {"set": [{"id": "call_issue_refund_4", "name": "issue_refund"`) || strings.Contains(h, "refunded ") {
				t.Fatalf("history while waiting: %s", h)
			}
			if code, body := do(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"decisions":[{"type":"bogus"}]}`); code != 400 {
				t.Fatalf("a bad decision: %d %s", code, body)
			}
			if code, body := do(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"decisions":[{"type":"approve"}]}`); code != 202 {
				t.Fatalf("approve: %d %s", code, body)
			}
			final := status(func(b string) bool { return strings.Contains(b, `"runtime_status": "Completed"`) })
			out, _ := json.Marshal(final["output"])
			var o struct {
				State struct {
					Messages []struct {
						Type    string `json:"type"`
						Content string `json:"content"`
					} `json:"messages"`
					Usage struct {
						ModelCalls int `json:"model_calls"`
					} `json:"usage"`
				} `json:"state"`
			}
			if err := json.Unmarshal(out, &o); err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, m := range o.State.Messages {
				types = append(types, m.Type)
			}
			if strings.Join(types, ",") != "human,ai,tool,ai,tool,ai" || o.State.Usage.ModelCalls != 3 {
				t.Fatalf("final state: %s", out)
			}
			if last := o.State.Messages[5].Content; !strings.HasPrefix(last, "Done: refunded ") {
				t.Fatalf("answer %q", last)
			}
		})
	}
}

// TestAssistant_OnTheOpenAIAdapter runs the assistant on the OpenAI adapter against a loopback
// server speaking the OpenAI API: the model's tool call runs, its result goes back in the next
// request, the streamed reply is the answer, the usage is the server's.
func TestAssistant_OnTheOpenAIAdapter(t *testing.T) {
	srv := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "lookup_order", Arguments: `{"order":"B200"}`}},
			Usage: openaitest.Usage{PromptTokens: 50, CompletionTokens: 5, CachedTokens: 40}},
		openaitest.Reply{Text: "Your order B200 is delivered.", Usage: openaitest.Usage{PromptTokens: 80, CompletionTokens: 7}},
	)
	t.Cleanup(srv.Close)
	m, vendor, err := assistantmodel.FromEnv(envMap{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.BaseURL()}.get)
	if err != nil || vendor != assistantmodel.VendorOpenAI {
		t.Fatalf("model: %v %s", err, vendor)
	}
	tr := serveApp(t, exampleapp.Config{Model: m})[0]
	if code, body := do(t, tr, "POST", "/api/graphs/assistant/runs", `{"instance_id":"oa","input":{"messages":[{"role":"user","content":"Where is B200?"}]}}`); code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	var body string
	for !strings.Contains(body, `"runtime_status": "Completed"`) {
		if time.Now().After(deadline) {
			t.Fatalf("status: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
		_, body = do(t, tr, "GET", "/api/runs/oa", "")
	}
	if !strings.Contains(body, `"content": "Your order B200 is delivered."`) ||
		!strings.Contains(body, `"usage": {"model_calls": 2, "input_tokens": 130, "output_tokens": 12, "cached_input_tokens": 40}`) {
		t.Fatalf("final: %s", body)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[1].Body.Stream || reqs[1].Body.Messages[3].Role != "tool" || !strings.Contains(reqs[1].Body.Messages[3].Text(), `"order":"B200"`) {
		t.Fatalf("requests: %d %+v", len(reqs), reqs)
	}
}

type envMap map[string]string

func (e envMap) get(k string) string { return e[k] }
