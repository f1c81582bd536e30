package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// modelOutage is a model endpoint that is down while down is set; it counts each run's calls
// per node.
type modelOutage struct {
	down atomic.Bool
	// retry: classify fails with a plain error while down, retried up to 3 attempts 10 ms
	// apart (a model outage that spends the node's attempts); else for good at once.
	retry bool
	mu    sync.Mutex
	calls map[string]int // "<run id>/<node>"
}

// graph builds "rw_api": plan → classify (calls the model) → reply (terminal).
func (o *modelOutage) graph(t *testing.T) durable.Graph {
	t.Helper()
	type st struct {
		Steps []string `json:"steps"`
	}
	b := durable.NewManifestBuilder[st]("rw_api")
	b.SetEntrypoint("plan")
	node := func(name string, model bool) durable.NodeFunc[st] {
		return func(ctx context.Context, s st) (any, error) {
			info, _ := durable.StepInfoFrom(ctx)
			o.mu.Lock()
			o.calls[info.RunID+"/"+name]++
			o.mu.Unlock()
			if model && o.down.Load() {
				if o.retry {
					return nil, errors.New("model endpoint unavailable (503)")
				}
				return nil, durable.NonRetryable(errors.New("model endpoint unavailable (503)"))
			}
			return durable.Update{"steps": append(slices.Clone(s.Steps), name)}, nil
		}
	}
	for _, err := range []error{
		b.AddNode("plan", node("plan", false), durable.WithHandlerName("test.rw.plan"), durable.WithNext("classify")),
		b.AddNode("classify", node("classify", true), durable.WithHandlerName("test.rw.classify"), durable.WithNext("reply"),
			durable.WithRetry(durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})),
		b.AddNode("reply", node("reply", false), durable.WithHandlerName("test.rw.reply"), durable.Terminal()),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (o *modelOutage) count(id, node string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls[id+"/"+node]
}

// serveRewind serves the runs API over a started in-memory engine with rw_api registered.
func serveRewind(t *testing.T, iso *isolation.Isolation) (*modelOutage, []funchosttest.Transport) {
	t.Helper()
	o := &modelOutage{calls: map[string]int{}}
	reg := durable.NewRegistry()
	if err := reg.Register(o.graph(t)); err != nil {
		t.Fatal(err)
	}
	auth := funchost.AuthAnonymous // runsapitest.Poll sends no key
	if iso != nil {
		auth = funchost.AuthFunction
	}
	_, trs := serveRunsWith(t, engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()},
		runsapi.Options{AuthLevel: auth, Isolation: iso})
	return o, trs
}

func isStatus(s string) func(runsapitest.StatusView) bool {
	return func(v runsapitest.StatusView) bool { return v.RuntimeStatus == s }
}

// rewoundIDs decodes a 200 of POST /api/runs/rewind.
func rewoundIDs(t *testing.T, r runsapitest.Response) ([]string, string) {
	t.Helper()
	var body struct {
		Rewound           []string `json:"rewound"`
		ContinuationToken *string  `json:"continuation_token"`
	}
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &body) != nil || body.Rewound == nil {
		t.Fatalf("rewind by filter: %d %s", r.Status, r.Body)
	}
	tok := ""
	if body.ContinuationToken != nil {
		if *body.ContinuationToken == "" {
			t.Fatalf("an empty continuation token: %s", r.Body)
		}
		tok = *body.ContinuationToken
	}
	return body.Rewound, tok
}

func TestRewind_OneRun_BothTransports(t *testing.T) {
	o, trs := serveRewind(t, nil)
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			call := func(method, path, body string) runsapitest.Response {
				return runsapitest.Call(t, tr, method, path, body, "x-functions-key", tr.FunctionKey)
			}
			id := runsapitest.UniqueID(tr, "rewind-one")
			o.down.Store(true)
			call("POST", "/api/graphs/rw_api/runs", `{"instance_id": "`+id+`"}`).Expect(t, "start", 202, "")
			runsapitest.Poll(t, tr, id, isStatus("Failed"))
			o.down.Store(false)

			// Bad bodies change nothing: the run is still Failed afterwards.
			call("POST", "/api/runs/"+id+"/rewind", `{"reason": 7}`).Expect(t, "number reason", 400, `{"error": "reason must be a string"}`)
			call("POST", "/api/runs/"+id+"/rewind", `[1]`).Expect(t, "array body", 400, `{"error": "request body must be valid JSON object"}`)
			call("POST", "/api/runs/nope-"+id+"/rewind", ``).Expect(t, "unknown run", 404, `{"error": "instance not found"}`)
			runsapitest.Poll(t, tr, id, isStatus("Failed"))

			r := call("POST", "/api/runs/"+id+"/rewind", `{"reason": "the model is back"}`)
			r.Expect(t, "rewind", 202, "")
			if loc := r.Header.Get("Location"); loc != tr.BaseURL+"/api/runs/"+id {
				t.Fatalf("Location %q", loc)
			}
			var v runsapitest.StatusView
			if err := json.Unmarshal([]byte(r.Body), &v); err != nil || string(r.Field(t, "instance_id")) != `"`+id+`"` ||
				v.RuntimeStatus != "Running" && v.RuntimeStatus != "Completed" {
				t.Fatalf("rewind body %s", r.Body)
			}
			done := runsapitest.Poll(t, tr, id, isStatus("Completed"))
			if !strings.Contains(done.Body, `"steps": ["plan", "classify", "reply"]`) {
				t.Fatalf("completed %s", done.Body)
			}
			if got := [3]int{o.count(id, "plan"), o.count(id, "classify"), o.count(id, "reply")}; got != [3]int{1, 2, 1} {
				t.Fatalf("handler calls plan classify reply = %v, want [1 2 1]: committed steps ran again", got)
			}
			hist := call("GET", "/api/runs/"+id+"/history", "")
			if !strings.Contains(hist.Body, `"type": "run_failed"`) || !strings.Contains(hist.Body, `"type": "run_rewound"`) ||
				!strings.Contains(hist.Body, `"reason": "the model is back"`) {
				t.Fatalf("history %s", hist.Body)
			}
			call("POST", "/api/runs/"+id+"/rewind", ``).Expect(t, "rewind of a completed run", 409,
				`{"error": "run '`+id+`' is Completed; only a Failed run can be rewound", "instance_id": "`+id+`", "runtime_status": "Completed"}`)
		})
	}
}

func TestRewind_ByFilter_BothTransports(t *testing.T) {
	o, trs := serveRewind(t, nil)
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			call := func(body string) runsapitest.Response {
				return runsapitest.Call(t, tr, "POST", "/api/runs/rewind", body, "x-functions-key", tr.FunctionKey)
			}
			for _, c := range []struct{ body, want string }{
				{``, `{"error": "request body must be valid JSON object"}`},
				{`{}`, `{"error": "failed_after is required: an RFC 3339 time"}`},
				{`{"failed_after": "yesterday"}`, `{"error": "invalid failed_after: want an RFC 3339 time such as 2025-01-02T15:04:05Z"}`},
				{`{"failed_after": "2026-01-01T00:00:00Z", "limit": 0}`, `{"error": "invalid limit: want 1 to 100"}`},
				{`{"failed_after": "2026-01-01T00:00:00Z", "limit": 101}`, `{"error": "invalid limit: want 1 to 100"}`},
				{`{"failed_after": "2026-01-01T00:00:00Z", "failed_before": "2025-01-01T00:00:00Z"}`, `{"error": "invalid failed_after: must be before failed_before"}`},
				{`{"failed_after": "2026-01-01T00:00:00Z", "limit": "3"}`, `{"error": "invalid request body: 'limit' must be a int"}`},
				{`{"failed_after": "2026-01-01T00:00:00Z", "graph": "x"}`, `{"error": "invalid request body: json: unknown field \"graph\""}`},
				{`{"failed_after": "2026-01-01T00:00:00Z", "continuation_token": "forged"}`, ""},
			} {
				r := call(c.body)
				r.Expect(t, "bad filter "+c.body, 400, c.want)
			}

			since := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
			o.down.Store(true)
			var want []string
			for i := range 5 {
				id := runsapitest.UniqueID(tr, fmt.Sprintf("outage-%d", i))
				want = append(want, id)
				runsapitest.Call(t, tr, "POST", "/api/graphs/rw_api/runs", `{"instance_id": "`+id+`"}`, "x-functions-key", tr.FunctionKey).Expect(t, "start", 202, "")
			}
			for _, id := range want {
				runsapitest.Poll(t, tr, id, isStatus("Failed"))
			}
			o.down.Store(false)
			body := `{"graph_name": "rw_api", "failed_after": "` + since + `", "limit": 2, "reason": "outage over"`
			var got []string
			tok := ""
			for calls := 0; ; calls++ {
				b := body
				if tok != "" {
					b += `, "continuation_token": "` + tok + `"`
				}
				var ids []string
				ids, tok = rewoundIDs(t, call(b+"}"))
				if len(ids) > 2 {
					t.Fatalf("a call of limit 2 rewound %v", ids)
				}
				got = append(got, ids...)
				if tok == "" {
					break
				}
				if calls > 10 {
					t.Fatal("the continuation never ends")
				}
			}
			slices.Sort(got)
			mine := slices.DeleteFunc(slices.Clone(got), func(id string) bool { return !strings.HasPrefix(id, tr.Name+"-") })
			if !slices.Equal(mine, want) || len(got) != len(want) {
				t.Fatalf("rewound %v, want %v", got, want)
			}
			for _, id := range want {
				runsapitest.Poll(t, tr, id, isStatus("Completed"))
				if o.count(id, "classify") != 2 || o.count(id, "plan") != 1 {
					t.Fatalf("%s: plan ran %d times, classify %d", id, o.count(id, "plan"), o.count(id, "classify"))
				}
			}
			// A second pass rewinds none.
			if ids, tok := rewoundIDs(t, call(body+"}")); len(ids) != 0 || tok != "" {
				t.Fatalf("second pass rewound %v (token %q)", ids, tok)
			}
		})
	}
}

func TestRewind_Isolation_BothTransports(t *testing.T) {
	o, trs := serveRewind(t, newIsolation(t, "127.0.0.1/32"))
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			since := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
			o.down.Store(true)
			alice, bob := runsapitest.UniqueID(tr, "iso-alice"), runsapitest.UniqueID(tr, "iso-bob")
			as(t, tr, "alice", key, "POST", "/api/graphs/rw_api/runs", `{"instance_id": "`+alice+`"}`).Expect(t, "alice start", 202, "")
			as(t, tr, "bob", key, "POST", "/api/graphs/rw_api/runs", `{"instance_id": "`+bob+`"}`).Expect(t, "bob start", 202, "")
			for _, id := range []string{alice, bob} {
				for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					r := as(t, tr, "", tr.MasterKey, "GET", "/api/runs/"+id, "")
					if strings.Contains(r.Body, `"runtime_status": "Failed"`) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s never failed: %s", id, r.Body)
					}
				}
			}
			o.down.Store(false)
			// Bob's rewind of alice's run answers as for a run that does not exist.
			as(t, tr, "bob", key, "POST", "/api/runs/"+alice+"/rewind", `{}`).Expect(t, "bob rewinds alice's run", 404, `{"error": "instance not found"}`)
			as(t, tr, "", key, "POST", "/api/runs/rewind", `{"failed_after": "`+since+`"}`).Expect(t, "no identity", 401, "")
			// Bob's rewind by filter rewinds his run only; alice's stays Failed.
			ids, _ := rewoundIDs(t, as(t, tr, "bob", key, "POST", "/api/runs/rewind", `{"failed_after": "`+since+`"}`))
			if !slices.Equal(ids, []string{bob}) {
				t.Fatalf("bob's rewind by filter = %v, want [%s]", ids, bob)
			}
			if r := as(t, tr, "alice", key, "GET", "/api/runs/"+alice, ""); !strings.Contains(r.Body, `"runtime_status": "Failed"`) {
				t.Fatalf("alice's run after bob's rewind: %s", r.Body)
			}
			// Alice rewinds her own.
			as(t, tr, "alice", key, "POST", "/api/runs/"+alice+"/rewind", `{}`).Expect(t, "alice rewinds her run", 202, "")
			ids, _ = rewoundIDs(t, as(t, tr, "alice", key, "POST", "/api/runs/rewind", `{"failed_after": "`+since+`"}`))
			if len(ids) != 0 {
				t.Fatalf("alice's rewind by filter after her rewind = %v", ids)
			}
		})
	}
}
