package platform

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// TestWait_PastTheBound_BothTransports: with a short MaxWait every platform route that waits
// for a run answers within the bound in its documented way, and the run goes on:
// runs/wait 504 (the thread stays busy, then takes the run's output), threadless runs/wait
// 504, runs/stream 200 with the wait-exceeded error frame, join and cancel?wait=1 202 with the
// run, Location and Retry-After (the background run goes on and a later join answers it).
func TestWait_PastTheBound_BothTransports(t *testing.T) {
	const bound = 300 * time.Millisecond
	gates := map[string]chan struct{}{}
	for _, tr := range []string{funchosttest.TransportStandalone, funchosttest.TransportEmulatedHost} {
		for _, k := range []string{"wait", "threadless", "stream", "join", "cancel"} {
			gates[tr+"-"+k] = make(chan struct{})
		}
	}
	gateOf := func(req host.Request) chan struct{} {
		var in struct {
			Gate string `json:"gate"`
		}
		_ = json.Unmarshal(req.Input, &in)
		return gates[in.Gate]
	}
	f := newFixture(t, host.Options{MaxWait: bound}, func(g *memGraph) {
		g.invoke = func(_ context.Context, req host.Request) (any, error) {
			if c := gateOf(req); c != nil {
				<-c // ignores cancellation: a cancel with wait=1 waits for it
			}
			return map[string]any{"done": json.RawMessage(req.Input)}, nil
		}
		g.stream = func(_ context.Context, req host.Request, emit func(any) error) error {
			if err := emit(map[string]any{"step": 1}); err != nil {
				return err
			}
			<-gateOf(req)
			return emit(map[string]any{"step": 2})
		}
	})
	t.Cleanup(func() { // before the fixture's cleanups: no run stays blocked
		for _, c := range gates {
			select {
			case <-c:
			default:
				close(c)
			}
		}
	})
	msg := apierror.WaitExceededMessage(bound)
	threadStatus := func(t *testing.T, tr funchosttest.Transport, tid string) (string, string) {
		var th struct {
			Status string          `json:"status"`
			Values json.RawMessage `json:"values"`
		}
		r := do(t, tr, "GET", "/api/threads/"+tid, "")
		if err := json.Unmarshal([]byte(r.body), &th); err != nil {
			t.Fatalf("thread: %d %s", r.status, r.body)
		}
		return th.Status, string(th.Values)
	}
	for _, tr := range f.trs {
		t.Run(tr.Name+"/threaded wait", func(t *testing.T) {
			tid := newThread(t, tr, "")
			key := tr.Name + "-wait"
			start := time.Now()
			r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/wait", `{"assistant_id":"chat","input":{"gate":"`+key+`"}}`)
			if r.status != http.StatusGatewayTimeout || r.body != detail(msg) ||
				!strings.HasPrefix(r.header.Get("Content-Location"), "/api/threads/"+tid+"/runs/") {
				t.Fatalf("got %d %v %s, want 504 %s", r.status, r.header, r.body, detail(msg))
			}
			if took := time.Since(start); took > bound+5*time.Second {
				t.Fatalf("answered after %v, want about %v", took, bound)
			}
			if st, _ := threadStatus(t, tr, tid); st != "busy" {
				t.Fatalf("thread status %q while the run goes on, want busy", st)
			}
			close(gates[key])
			want := `{"done": {"gate": "` + key + `"}}`
			funchosttest.Eventually(t, "the run ends and stores its output", func() bool {
				st, values := threadStatus(t, tr, tid)
				return st == "idle" && values == want
			})
		})
		t.Run(tr.Name+"/threadless wait", func(t *testing.T) {
			key := tr.Name + "-threadless"
			r := do(t, tr, "POST", "/api/runs/wait", `{"assistant_id":"chat","input":{"gate":"`+key+`"}}`)
			if r.status != http.StatusGatewayTimeout || r.body != detail(msg) {
				t.Fatalf("got %d %s, want 504 %s", r.status, r.body, detail(msg))
			}
			close(gates[key])
		})
		t.Run(tr.Name+"/threaded stream", func(t *testing.T) {
			tid := newThread(t, tr, "")
			key := tr.Name + "-stream"
			r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/stream", `{"assistant_id":"chat","input":{"gate":"`+key+`"}}`)
			runID := strings.TrimPrefix(r.header.Get("Content-Location"), "/api/threads/"+tid+"/runs/")
			want := "event: metadata\ndata: {\"run_id\": \"" + runID + "\"}\n\n" +
				"event: values\ndata: {\"step\": 1}\n\n" +
				"event: error\ndata: {\"error\": \"graph run did not finish within 0.3 s; it goes on in the background\"}\n\n" +
				"event: end\ndata: null\n\n"
			if r.status != http.StatusOK || r.body != want {
				t.Fatalf("got %d %q, want 200 %q", r.status, r.body, want)
			}
			close(gates[key])
			funchosttest.Eventually(t, "the stream run ends and frees its thread", func() bool {
				st, _ := threadStatus(t, tr, tid)
				return st == "idle"
			})
		})
		for _, route := range []string{"join", "cancel"} {
			t.Run(tr.Name+"/"+route, func(t *testing.T) {
				tid := newThread(t, tr, "")
				key := tr.Name + "-" + route
				base := "/api/threads/" + tid + "/runs"
				var run runBody
				if r := do(t, tr, "POST", base, `{"assistant_id":"chat","input":{"gate":"`+key+`"}}`); r.status != 200 || json.Unmarshal([]byte(r.body), &run) != nil {
					t.Fatalf("create: %d %s", r.status, r.body)
				}
				path, location := base+"/"+run.RunID+"/join", base+"/"+run.RunID+"/join"
				method := "GET"
				if route == "cancel" {
					path, location, method = base+"/"+run.RunID+"/cancel?wait=1", base+"/"+run.RunID, "POST"
					funchosttest.Eventually(t, "the run starts", func() bool {
						return strings.Contains(do(t, tr, "GET", base+"/"+run.RunID, "").body, `"status": "running"`)
					})
				}
				r := do(t, tr, method, path, "")
				var got runBody
				if r.status != http.StatusAccepted || json.Unmarshal([]byte(r.body), &got) != nil || got.RunID != run.RunID ||
					(got.Status != "pending" && got.Status != "running") || r.header.Get("Location") != location ||
					r.header.Get("Retry-After") != retryAfterSeconds || r.header.Get("Content-Location") != base+"/"+run.RunID {
					t.Fatalf("got %d %v %s, want 202 with the unfinished run", r.status, r.header, r.body)
				}
				close(gates[key])
				join := do(t, tr, "GET", base+"/"+run.RunID+"/join", "")
				if join.status != http.StatusOK {
					t.Fatalf("join after the run ended: %d %s", join.status, join.body)
				}
				// The graph ignores cancellation and ends well: the run succeeded.
				if r := do(t, tr, "GET", base+"/"+run.RunID, ""); !strings.Contains(r.body, `"status": "success"`) {
					t.Fatalf("run after it ended: %s, want status success", r.body)
				}
			})
		}
	}
}
