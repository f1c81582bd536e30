package runsapi_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/examples"
)

const (
	pipelineHash = "6135ea2aa13d431c"
	supportHash  = "af183f226f37e6fc"
	refundReply  = "We have queued your refund review. A team member will validate the invoice and confirm next steps."
	manualReview = "Your request requires manual review before we can proceed."
	thanksReply  = "Thanks for reaching out. We have prepared a response for your request."
)

var gatesMu sync.Mutex

func newGate(name string) chan struct{} {
	gatesMu.Lock()
	defer gatesMu.Unlock()
	ch := make(chan struct{})
	gates.ch[name] = ch
	return ch
}

func supportState(msg string, needsHuman bool, approved, reviewer, draft, final, tags string) string {
	return fmt.Sprintf(`{"user_message":%q,"needs_human":%t,"approved":%s,"reviewer":%s,"draft_response":%s,"final_response":%s,"tags":%s}`,
		msg, needsHuman, approved, reviewer, draft, final, tags)
}

// TestContract_ExampleGraphs_BothTransports runs the spec's HTTP behaviours for the three
// example graphs on the real engine and the memory backend, through both transports.
func TestContract_ExampleGraphs_BothTransports(t *testing.T) {
	classifierHash := hashOf(t, "content_classifier")
	loopHash := testGraphs(t)[0].Manifest().GraphHash
	for _, tr := range serveEngine(t) {
		t.Run(tr.Name, func(t *testing.T) {
			t.Run("data_pipeline completes", func(t *testing.T) {
				id := uniqueID(tr, "pipeline")
				start(t, tr, "data_pipeline", id, `{"source_url": "https://example.com/data"}`)
				res := poll(t, tr, id, finished)
				res.expect(t, "status", 200, statusBody(id, "Completed", custom4("data_pipeline", pipelineHash, "load"),
					runInput("data_pipeline", pipelineHash, `{"source_url":"https://example.com/data"}`),
					completedOutput("data_pipeline", pipelineHash, "load", pipelineFinalState)))

				// A finished run refuses events and cancels, and keeps its status.
				call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{}`).expect(t, "event on finished", 409,
					fmt.Sprintf(`{"error": "instance is not running", "instance_id": "%s", "runtime_status": "Completed"}`, id))
				call(t, tr, "POST", "/api/runs/"+id+"/cancel", ``).expect(t, "cancel on finished", 409,
					fmt.Sprintf(`{"error": "instance is not running", "instance_id": "%s", "runtime_status": "Completed"}`, id))
				poll(t, tr, id, finished).expect(t, "status unchanged", 200, res.body)

				// A finished id can be reused: the new run replaces it.
				start(t, tr, "data_pipeline", id, `{"source_url": "https://example.com/other"}`)
				poll(t, tr, id, func(v statusView) bool { return finished(v) && strings.Contains(string(v.Output), "example.com/other") })
			})

			classifier := []struct{ text, category, sentiment, response string }{
				{"How do I reset my password?", "question", "neutral", "Thank you for your question. Our team will research this and get back to you within 24 hours."},
				{"This product is broken and I hate it", "complaint", "negative", "We're sorry to hear about your experience. A support specialist has been assigned to resolve this issue."},
				{"Great work, thanks", "feedback", "positive", "Thank you for your feedback! We appreciate you taking the time to share."},
			}
			for i, c := range classifier {
				t.Run("content_classifier "+c.category, func(t *testing.T) {
					id := uniqueID(tr, fmt.Sprintf("classifier-%d", i))
					start(t, tr, "content_classifier", id, fmt.Sprintf(`{"text": %q}`, c.text))
					summary := fmt.Sprintf("Category: %s | Sentiment: %s | Response: %s", c.category, c.sentiment, c.response)
					state := fmt.Sprintf(`{"text":%q,"category":%q,"sentiment":%q,"response":%q,"summary":%q}`, c.text, c.category, c.sentiment, c.response, summary)
					poll(t, tr, id, finished).expect(t, "status", 200, statusBody(id, "Completed", custom4("content_classifier", classifierHash, "summarize"),
						runInput("content_classifier", classifierHash, fmt.Sprintf(`{"text":%q}`, c.text)),
						completedOutput("content_classifier", classifierHash, "summarize", state)))
				})
			}

			approvals := []struct {
				name, payload, approved, reviewer, draft, final string
			}{
				{"approved", `{"approved": true, "reviewer": "admin@example.com"}`, "true", `"admin@example.com"`, refundReply, refundReply + " Reviewer: admin@example.com."},
				{"rejected", `{"approved": false}`, "false", "null", manualReview, manualReview},
				{"null payload", ``, "false", "null", manualReview, manualReview},
			}
			for _, a := range approvals {
				t.Run("support_agent "+a.name, func(t *testing.T) {
					id := uniqueID(tr, "support-"+a.name)
					msg := "I need a refund for invoice 42"
					start(t, tr, "support_agent", id, fmt.Sprintf(`{"user_message": %q}`, msg))
					waitingState := poll(t, tr, id, waiting)
					waitingState.expect(t, "waiting", 200, statusBody(id, "Running", custom6("support_agent", supportHash, "classify_request", "approval", "draft_reply"),
						runInput("support_agent", supportHash, fmt.Sprintf(`{"user_message":%q}`, msg)), "null"))
					call(t, tr, "POST", "/api/runs/"+id+"/events/approval", a.payload).expect(t, "event", 202,
						fmt.Sprintf(`{"instance_id": "%s", "event_name": "approval", "accepted": true}`, id))
					state := supportState(msg, true, a.approved, a.reviewer, quote(a.draft), quote(a.final), `["refund"]`)
					poll(t, tr, id, finished).expect(t, "completed", 200, statusBody(id, "Completed", custom4("support_agent", supportHash, "finalize_reply"),
						runInput("support_agent", supportHash, fmt.Sprintf(`{"user_message":%q}`, msg)),
						completedOutput("support_agent", supportHash, "finalize_reply", state)))
				})
			}

			t.Run("support_agent no approval needed", func(t *testing.T) {
				id := uniqueID(tr, "support-hello")
				start(t, tr, "support_agent", id, `{"user_message": "hello there"}`)
				state := supportState("hello there", false, "null", "null", quote(thanksReply), quote(thanksReply), `["general"]`)
				poll(t, tr, id, finished).expect(t, "completed", 200, statusBody(id, "Completed", custom4("support_agent", supportHash, "finalize_reply"),
					runInput("support_agent", supportHash, `{"user_message":"hello there"}`),
					completedOutput("support_agent", supportHash, "finalize_reply", state)))
			})

			t.Run("event sent before the wait", func(t *testing.T) {
				id := uniqueID(tr, "gated")
				gate := newGate(id)
				start(t, tr, "gated", id, fmt.Sprintf(`{"gate": %q}`, id))
				call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true}`).expect(t, "early event", 202,
					fmt.Sprintf(`{"instance_id": "%s", "event_name": "approval", "accepted": true}`, id))
				res := call(t, tr, "GET", "/api/runs/"+id, "")
				if strings.Contains(res.body, `"waiting_for_event"`) || strings.Contains(res.body, `"Completed"`) {
					t.Fatalf("run passed its gate before release: %s", res.body)
				}
				close(gate)
				res = poll(t, tr, id, finished)
				if !strings.Contains(res.body, `"runtime_status": "Completed"`) || !strings.Contains(res.body, `"state": {"gate": "`+id+`", "approved": true}`) {
					t.Fatalf("early event not applied: %s", res.body)
				}
			})

			t.Run("support_agent event sent at once", func(t *testing.T) {
				id := uniqueID(tr, "support-early")
				start(t, tr, "support_agent", id, `{"user_message": "legal question about a refund"}`)
				call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true, "reviewer": "r"}`).expect(t, "event", 202, "")
				res := poll(t, tr, id, finished)
				if !strings.Contains(res.body, quote(refundReply+" Reviewer: r.")) {
					t.Fatalf("approval not applied: %s", res.body)
				}
			})

			t.Run("wrong event name keeps waiting", func(t *testing.T) {
				id := uniqueID(tr, "support-wrong")
				start(t, tr, "support_agent", id, `{"user_message": "refund please"}`)
				poll(t, tr, id, waiting)
				call(t, tr, "POST", "/api/runs/"+id+"/events/Approval", `{"approved": true}`).expect(t, "wrong event", 202,
					fmt.Sprintf(`{"instance_id": "%s", "event_name": "Approval", "accepted": true}`, id))
				time.Sleep(150 * time.Millisecond)
				poll(t, tr, id, waiting) // still waiting for "approval"
				call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": false, "reviewer": "x"}`).expect(t, "right event", 202, "")
				res := poll(t, tr, id, finished)
				if !strings.Contains(res.body, quote(manualReview+" Reviewer: x.")) {
					t.Fatalf("right event not applied: %s", res.body)
				}
			})

			t.Run("cancel while waiting", func(t *testing.T) {
				id := uniqueID(tr, "support-cancel")
				start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				poll(t, tr, id, waiting)
				call(t, tr, "POST", "/api/runs/"+id+"/cancel", `{"reason": "no longer needed"}`).expect(t, "cancel", 202,
					fmt.Sprintf(`{"instance_id": "%s", "terminated": true, "reason": "no longer needed"}`, id))
				poll(t, tr, id, finished).expect(t, "terminated", 200, statusBody(id, "Terminated",
					custom6("support_agent", supportHash, "classify_request", "approval", "draft_reply"),
					runInput("support_agent", supportHash, `{"user_message":"refund"}`), `"no longer needed"`))
				call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{}`).expect(t, "event after cancel", 409,
					fmt.Sprintf(`{"error": "instance is not running", "instance_id": "%s", "runtime_status": "Terminated"}`, id))
			})

			t.Run("instance already exists", func(t *testing.T) {
				id := uniqueID(tr, "support-exists")
				start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				poll(t, tr, id, waiting)
				call(t, tr, "POST", "/api/graphs/support_agent/runs", fmt.Sprintf(`{"instance_id": %q, "input": {"user_message": "again"}}`, id)).expect(t, "duplicate", 409,
					fmt.Sprintf(`{"error": "instance already exists", "instance_id": "%s", "runtime_status": "Running"}`, id))
				call(t, tr, "DELETE", "/api/runs/"+id, "").expect(t, "purge active", 409,
					fmt.Sprintf(`{"error": "instance is still active", "instance_id": "%s", "runtime_status": "Running"}`, id))
				call(t, tr, "POST", "/api/runs/"+id+"/cancel", ``).expect(t, "cancel default", 202,
					fmt.Sprintf(`{"instance_id": "%s", "terminated": true, "reason": "cancel requested by client"}`, id))
				poll(t, tr, id, finished)
			})

			t.Run("unknown run", func(t *testing.T) {
				call(t, tr, "GET", "/api/runs/no-such-run", "").expect(t, "status", 404, `{"error": "instance not found"}`)
				call(t, tr, "POST", "/api/runs/no-such-run/events/approval", `{}`).expect(t, "event", 404, `{"error": "instance not found"}`)
				call(t, tr, "POST", "/api/runs/no-such-run/cancel", `{"reason": 1}`).expect(t, "cancel", 404, `{"error": "instance not found"}`)
				call(t, tr, "GET", "/api/runs/no-such-run/history", "").expect(t, "history", 404, `{"error": "instance not found"}`)
				call(t, tr, "DELETE", "/api/runs/no-such-run", "").expect(t, "purge", 404, `{"error": "instance not found"}`)
				call(t, tr, "POST", "/api/graphs/no_such_graph/runs", `{}`).expect(t, "unknown graph", 404, `{"error": "unknown graph 'no_such_graph'"}`)
			})

			t.Run("max steps", func(t *testing.T) {
				id := uniqueID(tr, "loop")
				start(t, tr, "loop", id, `{}`)
				poll(t, tr, id, finished).expect(t, "failed", 200, statusBody(id, "Failed", custom4("loop", loopHash, "spin"),
					runInput("loop", loopHash, `{}`),
					quote(fmt.Sprintf("orchestrator failed: max steps exceeded: graph 'loop' made %d node visits without completing", contractMaxSteps))))
			})

			t.Run("invalid initial state refused", func(t *testing.T) {
				id := uniqueID(tr, "pipeline-bad")
				call(t, tr, "POST", "/api/graphs/data_pipeline/runs", fmt.Sprintf(`{"instance_id": %q, "input": {"other": 1, "record_count": "many"}}`, id)).
					expect(t, "start", 400, `{"error": "invalid initial state", "details": [{"loc": ["source_url"], "msg": "field required"}, {"loc": ["record_count"], "msg": "expected an integer, got \"many\""}]}`)
				call(t, tr, "GET", "/api/runs/"+id, "").expect(t, "nothing stored", 404, `{"error": "instance not found"}`)
			})

			t.Run("event body not JSON refused", func(t *testing.T) {
				id := uniqueID(tr, "support-badbody")
				start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				poll(t, tr, id, waiting)
				call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": tr`).expect(t, "truncated body", 400, `{"error": "request body must be valid JSON"}`)
				hist := call(t, tr, "GET", "/api/runs/"+id+"/history", "")
				if strings.Contains(hist.body, "event_received") {
					t.Fatalf("a refused event was stored: %s", hist.body)
				}
				call(t, tr, "POST", "/api/runs/"+id+"/cancel", ``).expect(t, "cancel", 202, "")
			})

			t.Run("event idempotency key stores once", func(t *testing.T) {
				id := uniqueID(tr, "support-idem")
				start(t, tr, "support_agent", id, `{"user_message": "hello"}`)
				poll(t, tr, id, finished)
				start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				poll(t, tr, id, waiting)
				for range 2 { // a client that lost the first 202 retries with the same key
					call(t, tr, "POST", "/api/runs/"+id+"/events/note", `{"n": 1}`, "Idempotency-Key", "k-1").
						expect(t, "event", 202, fmt.Sprintf(`{"instance_id": "%s", "event_name": "note", "accepted": true}`, id))
				}
				call(t, tr, "POST", "/api/runs/"+id+"/events/note", `{"n": 2}`, "Idempotency-Key", "k-2").expect(t, "other key", 202, "")
				hist := call(t, tr, "GET", "/api/runs/"+id+"/history", "")
				if n := strings.Count(hist.body, `"event_received"`); n != 2 {
					t.Fatalf("%d events stored for keys k-1 (twice) and k-2, want 2: %s", n, hist.body)
				}
				call(t, tr, "POST", "/api/runs/"+id+"/cancel", ``).expect(t, "cancel", 202, "")
			})

			t.Run("bad run ids answer 404", func(t *testing.T) {
				for _, bad := range []string{"a%2Fb", "a%23b", "a%3Fb", "a%5Cb", "tab%09id", "ctl%01id", strings.Repeat("x", 513), strings.Repeat("y", 257)} {
					for _, rq := range []struct{ method, suffix, body string }{
						{"GET", "", ""}, {"POST", "/events/approval", `{}`}, {"POST", "/cancel", ``},
						{"GET", "/history", ""}, {"DELETE", "", ""},
					} {
						res := call(t, tr, rq.method, "/api/runs/"+bad+rq.suffix, rq.body)
						if res.status != 404 || res.body != `{"error": "instance not found"}` {
							t.Errorf("%s /api/runs/%.20s…%s: %d %s, want 404 instance not found", rq.method, bad, rq.suffix, res.status, res.body)
						}
					}
				}
			})

			t.Run("list history purge", func(t *testing.T) {
				id := uniqueID(tr, "pipeline-purge")
				start(t, tr, "data_pipeline", id, `{"source_url": "s"}`)
				poll(t, tr, id, finished)
				list := call(t, tr, "GET", "/api/runs?graph_name=data_pipeline&status=Completed&limit=1000", "")
				list.expect(t, "list", 200, "")
				if !strings.Contains(list.body, `"instance_id": "`+id+`", "runtime_status": "Completed", "graph_name": "data_pipeline"`) || strings.Contains(list.body, "support_agent") {
					t.Fatalf("list by graph and status: %s", list.body)
				}
				hist := call(t, tr, "GET", "/api/runs/"+id+"/history", "")
				hist.expect(t, "history", 200, "")
				if !strings.HasPrefix(hist.body, `{"instance_id": "`+id+`", "events": [{"sequence": `) || !strings.Contains(hist.body, `"node": "transform"`) {
					t.Fatalf("history: %s", hist.body)
				}
				page := call(t, tr, "GET", "/api/runs/"+id+"/history?limit=1", "")
				if !strings.Contains(page.body, `"continuation_token": "`) {
					t.Fatalf("history page of 1 has no continuation token: %s", page.body)
				}
				badToken := `{"error": "invalid query parameter 'continuation_token': want the token of a previous page"}`
				call(t, tr, "GET", "/api/runs?continuation_token=%25%25not-a-token", "").expect(t, "list bad token", 400, badToken)
				call(t, tr, "GET", "/api/runs/"+id+"/history?continuation_token=%25%25not-a-token", "").expect(t, "history bad token", 400, badToken)
				call(t, tr, "DELETE", "/api/runs/"+id, "").expect(t, "purge", 200, fmt.Sprintf(`{"instance_id": "%s", "purged": true}`, id))
				call(t, tr, "GET", "/api/runs/"+id, "").expect(t, "gone", 404, `{"error": "instance not found"}`)
			})
		})
	}
}

// The example graphs must be the spec's (their hashes are the spec vectors).
func TestContract_ExampleHashes_AreSpecVectors(t *testing.T) {
	if h := examples.MustDataPipeline().Manifest().GraphHash; h != pipelineHash {
		t.Fatalf("data_pipeline hash %s", h)
	}
	if h := examples.MustSupportAgent().Manifest().GraphHash; h != supportHash {
		t.Fatalf("support_agent hash %s", h)
	}
}
