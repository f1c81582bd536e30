package runsapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

const (
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

// TestContract_ExampleGraphs_BothTransports runs the contract's HTTP behaviours for the three
// example graphs on the real engine and the memory backend, through both transports.
func TestContract_ExampleGraphs_BothTransports(t *testing.T) {
	classifierHash := hashOf(t, "content_classifier")
	loopHash := testGraphs(t)[0].Manifest().GraphHash
	for _, tr := range serveEngine(t) {
		t.Run(tr.Name, func(t *testing.T) {
			t.Run("data_pipeline completes", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "pipeline")
				runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "https://example.com/data"}`)
				res := runsapitest.Poll(t, tr, id, runsapitest.Finished)
				res.Expect(t, "status", 200, runsapitest.StatusBody(id, "Completed", runsapitest.Custom4("data_pipeline", runsapitest.PipelineHash, "load"),
					runsapitest.RunInput("data_pipeline", runsapitest.PipelineHash, `{"source_url":"https://example.com/data"}`),
					runsapitest.CompletedOutput("data_pipeline", runsapitest.PipelineHash, "load", runsapitest.PipelineFinalState)))

				// A finished run refuses events and cancels, and keeps its status.
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{}`).Expect(t, "event on finished", 409,
					fmt.Sprintf(`{"error": "instance is not running", "instance_id": "%s", "runtime_status": "Completed"}`, id))
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/cancel", ``).Expect(t, "cancel on finished", 409,
					fmt.Sprintf(`{"error": "instance is not running", "instance_id": "%s", "runtime_status": "Completed"}`, id))
				runsapitest.Poll(t, tr, id, runsapitest.Finished).Expect(t, "status unchanged", 200, res.Body)

				// A finished id can be reused: the new run replaces it.
				runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "https://example.com/other"}`)
				runsapitest.Poll(t, tr, id, func(v runsapitest.StatusView) bool {
					return runsapitest.Finished(v) && strings.Contains(string(v.Output), "example.com/other")
				})
			})

			classifier := []struct{ text, category, sentiment, response string }{
				{"How do I reset my password?", "question", "neutral", "Thank you for your question. Our team will research this and get back to you within 24 hours."},
				{"This product is broken and I hate it", "complaint", "negative", "We're sorry to hear about your experience. A support specialist has been assigned to resolve this issue."},
				{"Great work, thanks", "feedback", "positive", "Thank you for your feedback! We appreciate you taking the time to share."},
			}
			for i, c := range classifier {
				t.Run("content_classifier "+c.category, func(t *testing.T) {
					id := runsapitest.UniqueID(tr, fmt.Sprintf("classifier-%d", i))
					runsapitest.Start(t, tr, "content_classifier", id, fmt.Sprintf(`{"text": %q}`, c.text))
					summary := fmt.Sprintf("Category: %s | Sentiment: %s | Response: %s", c.category, c.sentiment, c.response)
					state := fmt.Sprintf(`{"text":%q,"category":%q,"sentiment":%q,"response":%q,"summary":%q}`, c.text, c.category, c.sentiment, c.response, summary)
					runsapitest.Poll(t, tr, id, runsapitest.Finished).Expect(t, "status", 200, runsapitest.StatusBody(id, "Completed", runsapitest.Custom4("content_classifier", classifierHash, "summarize"),
						runsapitest.RunInput("content_classifier", classifierHash, fmt.Sprintf(`{"text":%q}`, c.text)),
						runsapitest.CompletedOutput("content_classifier", classifierHash, "summarize", state)))
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
					id := runsapitest.UniqueID(tr, "support-"+a.name)
					msg := "I need a refund for invoice 42"
					runsapitest.Start(t, tr, "support_agent", id, fmt.Sprintf(`{"user_message": %q}`, msg))
					waitingState := runsapitest.Poll(t, tr, id, runsapitest.Waiting)
					waitingState.Expect(t, "waiting", 200, runsapitest.StatusBody(id, "Running", runsapitest.Custom6("support_agent", runsapitest.SupportHash, "classify_request", "approval", "draft_reply"),
						runsapitest.RunInput("support_agent", runsapitest.SupportHash, fmt.Sprintf(`{"user_message":%q}`, msg)), "null"))
					runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", a.payload).Expect(t, "event", 202,
						fmt.Sprintf(`{"instance_id": "%s", "event_name": "approval", "accepted": true}`, id))
					state := supportState(msg, true, a.approved, a.reviewer, quote(a.draft), quote(a.final), `["refund"]`)
					runsapitest.Poll(t, tr, id, runsapitest.Finished).Expect(t, "completed", 200, runsapitest.StatusBody(id, "Completed", runsapitest.Custom4("support_agent", runsapitest.SupportHash, "finalize_reply"),
						runsapitest.RunInput("support_agent", runsapitest.SupportHash, fmt.Sprintf(`{"user_message":%q}`, msg)),
						runsapitest.CompletedOutput("support_agent", runsapitest.SupportHash, "finalize_reply", state)))
				})
			}

			t.Run("support_agent no approval needed", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "support-hello")
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "hello there"}`)
				state := supportState("hello there", false, "null", "null", quote(thanksReply), quote(thanksReply), `["general"]`)
				runsapitest.Poll(t, tr, id, runsapitest.Finished).Expect(t, "completed", 200, runsapitest.StatusBody(id, "Completed", runsapitest.Custom4("support_agent", runsapitest.SupportHash, "finalize_reply"),
					runsapitest.RunInput("support_agent", runsapitest.SupportHash, `{"user_message":"hello there"}`),
					runsapitest.CompletedOutput("support_agent", runsapitest.SupportHash, "finalize_reply", state)))
			})

			t.Run("event sent before the wait", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "gated")
				gate := newGate(id)
				runsapitest.Start(t, tr, "gated", id, fmt.Sprintf(`{"gate": %q}`, id))
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true}`).Expect(t, "early event", 202,
					fmt.Sprintf(`{"instance_id": "%s", "event_name": "approval", "accepted": true}`, id))
				res := runsapitest.Call(t, tr, "GET", "/api/runs/"+id, "")
				if strings.Contains(res.Body, `"waiting_for_event"`) || strings.Contains(res.Body, `"Completed"`) {
					t.Fatalf("run passed its gate before release: %s", res.Body)
				}
				close(gate)
				res = runsapitest.Poll(t, tr, id, runsapitest.Finished)
				if !strings.Contains(res.Body, `"runtime_status": "Completed"`) || !strings.Contains(res.Body, `"state": {"gate": "`+id+`", "approved": true}`) {
					t.Fatalf("early event not applied: %s", res.Body)
				}
			})

			t.Run("support_agent event sent at once", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "support-early")
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "legal question about a refund"}`)
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true, "reviewer": "r"}`).Expect(t, "event", 202, "")
				res := runsapitest.Poll(t, tr, id, runsapitest.Finished)
				if !strings.Contains(res.Body, quote(refundReply+" Reviewer: r.")) {
					t.Fatalf("approval not applied: %s", res.Body)
				}
			})

			t.Run("event with no handler is 404, nothing stored", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "support-wrong")
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund please"}`)
				runsapitest.Poll(t, tr, id, runsapitest.Waiting)
				before := strings.Count(runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history", "").Body, `"event_received"`)
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/Approval", `{"approved": true}`).Expect(t, "wrong event", 404,
					`{"error": "graph 'support_agent' has no handler for event 'Approval'"}`)
				if after := strings.Count(runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history", "").Body, `"event_received"`); after != before {
					t.Fatalf("a refused event was stored: %d → %d", before, after)
				}
				runsapitest.Poll(t, tr, id, runsapitest.Waiting) // still waiting for "approval"
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": false, "reviewer": "x", "aproved": true}`).Expect(t, "right event, an unknown key", 202, "")
				res := runsapitest.Poll(t, tr, id, runsapitest.Finished)
				if !strings.Contains(res.Body, quote(manualReview+" Reviewer: x.")) {
					t.Fatalf("right event not applied: %s", res.Body)
				}
			})

			t.Run("cancel while waiting", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "support-cancel")
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				runsapitest.Poll(t, tr, id, runsapitest.Waiting)
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/cancel", `{"reason": "no longer needed"}`).Expect(t, "cancel", 202,
					fmt.Sprintf(`{"instance_id": "%s", "terminated": true, "reason": "no longer needed"}`, id))
				runsapitest.Poll(t, tr, id, runsapitest.Finished).Expect(t, "terminated", 200, runsapitest.StatusBody(id, "Terminated",
					runsapitest.Custom6("support_agent", runsapitest.SupportHash, "classify_request", "approval", "draft_reply"),
					runsapitest.RunInput("support_agent", runsapitest.SupportHash, `{"user_message":"refund"}`), `"no longer needed"`))
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{}`).Expect(t, "event after cancel", 409,
					fmt.Sprintf(`{"error": "instance is not running", "instance_id": "%s", "runtime_status": "Terminated"}`, id))
			})

			t.Run("instance already exists", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "support-exists")
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				runsapitest.Poll(t, tr, id, runsapitest.Waiting)
				runsapitest.Call(t, tr, "POST", "/api/graphs/support_agent/runs", fmt.Sprintf(`{"instance_id": %q, "input": {"user_message": "again"}}`, id)).Expect(t, "duplicate", 409,
					fmt.Sprintf(`{"error": "instance already exists", "instance_id": "%s", "runtime_status": "Running"}`, id))
				runsapitest.Call(t, tr, "DELETE", "/api/runs/"+id, "").Expect(t, "purge active", 409,
					fmt.Sprintf(`{"error": "instance is still active", "instance_id": "%s", "runtime_status": "Running"}`, id))
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/cancel", ``).Expect(t, "cancel default", 202,
					fmt.Sprintf(`{"instance_id": "%s", "terminated": true, "reason": "cancel requested by client"}`, id))
				runsapitest.Poll(t, tr, id, runsapitest.Finished)
			})

			t.Run("unknown run", func(t *testing.T) {
				runsapitest.Call(t, tr, "GET", "/api/runs/no-such-run", "").Expect(t, "status", 404, `{"error": "instance not found"}`)
				runsapitest.Call(t, tr, "POST", "/api/runs/no-such-run/events/approval", `{}`).Expect(t, "event", 404, `{"error": "instance not found"}`)
				runsapitest.Call(t, tr, "POST", "/api/runs/no-such-run/cancel", `{"reason": 1}`).Expect(t, "cancel", 404, `{"error": "instance not found"}`)
				runsapitest.Call(t, tr, "GET", "/api/runs/no-such-run/history", "").Expect(t, "history", 404, `{"error": "instance not found"}`)
				runsapitest.Call(t, tr, "DELETE", "/api/runs/no-such-run", "").Expect(t, "purge", 404, `{"error": "instance not found"}`)
				runsapitest.Call(t, tr, "POST", "/api/graphs/no_such_graph/runs", `{}`).Expect(t, "unknown graph", 404, `{"error": "unknown graph 'no_such_graph'"}`)
			})

			t.Run("max steps", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "loop")
				runsapitest.Start(t, tr, "loop", id, `{}`)
				runsapitest.Poll(t, tr, id, runsapitest.Finished).Expect(t, "failed", 200, runsapitest.StatusBody(id, "Failed", runsapitest.Custom4("loop", loopHash, "spin"),
					runsapitest.RunInput("loop", loopHash, `{}`),
					quote(fmt.Sprintf("orchestrator failed: max steps exceeded: graph 'loop' made %d node visits without completing", contractMaxSteps))))
			})

			t.Run("invalid initial state refused", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "pipeline-bad")
				runsapitest.Call(t, tr, "POST", "/api/graphs/data_pipeline/runs", fmt.Sprintf(`{"instance_id": %q, "input": {"other": 1, "record_count": "many"}}`, id)).
					Expect(t, "start", 400, `{"error": "invalid initial state", "details": [{"loc": ["source_url"], "msg": "field required"}, {"loc": ["record_count"], "msg": "expected an integer, got \"many\""}]}`)
				runsapitest.Call(t, tr, "GET", "/api/runs/"+id, "").Expect(t, "nothing stored", 404, `{"error": "instance not found"}`)
			})

			t.Run("event body not JSON refused", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "support-badbody")
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				runsapitest.Poll(t, tr, id, runsapitest.Waiting)
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": tr`).Expect(t, "truncated body", 400, `{"error": "request body must be valid JSON"}`)
				hist := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history", "")
				if strings.Contains(hist.Body, "event_received") {
					t.Fatalf("a refused event was stored: %s", hist.Body)
				}
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/cancel", ``).Expect(t, "cancel", 202, "")
			})

			t.Run("event idempotency key stores once", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "support-idem")
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "hello"}`)
				runsapitest.Poll(t, tr, id, runsapitest.Finished)
				runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund"}`)
				runsapitest.Poll(t, tr, id, runsapitest.Waiting)
				for range 2 { // a client that lost the first 202 retries with the same key
					runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true}`, "Idempotency-Key", "k-1").
						Expect(t, "event", 202, fmt.Sprintf(`{"instance_id": "%s", "event_name": "approval", "accepted": true}`, id))
				}
				runsapitest.Poll(t, tr, id, runsapitest.Finished)
				hist := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history", "")
				if n := strings.Count(hist.Body, `"event_received"`); n != 1 {
					t.Fatalf("%d events stored for key k-1 sent twice, want 1: %s", n, hist.Body)
				}
			})

			t.Run("bad run ids answer 404", func(t *testing.T) {
				for _, bad := range []string{"a%2Fb", "a%23b", "a%3Fb", "a%5Cb", "tab%09id", "ctl%01id", strings.Repeat("x", 513), strings.Repeat("y", 257)} {
					for _, rq := range []struct{ method, suffix, body string }{
						{"GET", "", ""}, {"POST", "/events/approval", `{}`}, {"POST", "/cancel", ``},
						{"GET", "/history", ""}, {"DELETE", "", ""},
					} {
						res := runsapitest.Call(t, tr, rq.method, "/api/runs/"+bad+rq.suffix, rq.body)
						if res.Status != 404 || res.Body != `{"error": "instance not found"}` {
							t.Errorf("%s /api/runs/%.20s…%s: %d %s, want 404 instance not found", rq.method, bad, rq.suffix, res.Status, res.Body)
						}
					}
				}
			})

			t.Run("list history purge", func(t *testing.T) {
				id := runsapitest.UniqueID(tr, "pipeline-purge")
				runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "s"}`)
				runsapitest.Poll(t, tr, id, runsapitest.Finished)
				list := runsapitest.Call(t, tr, "GET", "/api/runs?graph_name=data_pipeline&status=Completed&limit=1000", "")
				list.Expect(t, "list", 200, "")
				if !strings.Contains(list.Body, `"instance_id": "`+id+`", "runtime_status": "Completed", "graph_name": "data_pipeline"`) || strings.Contains(list.Body, "support_agent") {
					t.Fatalf("list by graph and status: %s", list.Body)
				}
				hist := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history", "")
				hist.Expect(t, "history", 200, "")
				if !strings.HasPrefix(hist.Body, `{"instance_id": "`+id+`", "events": [{"sequence": `) || !strings.Contains(hist.Body, `"node": "transform"`) {
					t.Fatalf("history: %s", hist.Body)
				}
				page := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?limit=1", "")
				if !strings.Contains(page.Body, `"continuation_token": "`) {
					t.Fatalf("history page of 1 has no continuation token: %s", page.Body)
				}
				badToken := `{"error": "invalid query parameter 'continuation_token': want the token of a previous page, or none to start over"}`
				var next string
				if err := json.Unmarshal(page.Field(t, "continuation_token"), &next); err != nil {
					t.Fatal(err)
				}
				runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?limit=1&continuation_token="+next, "").Expect(t, "history page 2", 200, "")
				// Junk the store would read as a position (AA is "\x00", eAB5 "x\x00y") is refused too.
				for _, junk := range []string{"%25%25not-a-token", "AA", "eAB5", "junk", next[:len(next)-1]} {
					runsapitest.Call(t, tr, "GET", "/api/runs?continuation_token="+junk, "").Expect(t, "list bad token "+junk, 400, badToken)
					runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?continuation_token="+junk, "").Expect(t, "history bad token "+junk, 400, badToken)
				}
				runsapitest.Call(t, tr, "DELETE", "/api/runs/"+id, "").Expect(t, "purge", 200, fmt.Sprintf(`{"instance_id": "%s", "purged": true}`, id))
				runsapitest.Call(t, tr, "GET", "/api/runs/"+id, "").Expect(t, "gone", 404, `{"error": "instance not found"}`)
			})
		})
	}
}

// The example graphs must be the contract's (their hashes are the contract vectors).
func TestContract_ExampleHashes_AreSpecVectors(t *testing.T) {
	if h := examples.MustDataPipeline().Manifest().GraphHash; h != runsapitest.PipelineHash {
		t.Fatalf("data_pipeline hash %s", h)
	}
	if h := examples.MustSupportAgent().Manifest().GraphHash; h != runsapitest.SupportHash {
		t.Fatalf("support_agent hash %s", h)
	}
}
