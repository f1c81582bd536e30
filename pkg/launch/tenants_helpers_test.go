package launch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// The tests of tenants_*_test.go serve an app on the embedded default as `serve` builds it
// (launch.FromEnv without AzureWebJobsStorage, then Assemble) with per-user isolation on, and
// check over HTTP that one identity's requests leave another's alone.

// tenantApp is one such app, served on one transport.
type tenantApp struct {
	a  *launch.Assembly
	s  launch.Settings
	tr funchosttest.Transport
}

// tenantApps returns, for each transport, a fresh app on the embedded default with env's
// settings and isolation on (X-MS-CLIENT-PRINCIPAL-ID believed from loopback): the example
// durable graphs and graphs with the runs API, the platform routes, the dispatcher running.
func tenantApps(t *testing.T, env map[string]string, graphs ...durable.Graph) []tenantApp {
	t.Helper()
	all, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, graphs...)
	var out []tenantApp
	for i := range 2 {
		e := map[string]string{
			"FUNCGRAPH_USER_ISOLATION":  "on",
			"FUNCGRAPH_IDENTITY_HEADER": isolation.PrincipalIDHeader,
			"FUNCGRAPH_TRUSTED_PROXIES": "127.0.0.1/32",
		}
		for k, v := range env {
			e[k] = v
		}
		s, err := launch.FromEnv(t.Context(), envOf(e), launch.ModeServe, discard())
		if err != nil {
			t.Fatal(err)
		}
		if s.MemoryBudget == nil || s.Isolation == nil {
			t.Fatal("the embedded default has no memory budget or no isolation")
		}
		a, err := launch.Assemble(s, launch.Spec{Durable: all, Platform: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close(); _ = s.Close() })
		out = append(out, tenantApp{a: a, s: s, tr: funchosttest.Transports(t, a.Host.FunctionApp())[i]})
	}
	return out
}

// master names the master key's requests (no identity) for as.
const master = ""

// as sends one request as identity who (with the function key), or with the master key and
// no identity when who is master, and returns the status and body.
func (app tenantApp) as(t *testing.T, who, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, app.tr.BaseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if who == master {
		req.Header.Set("x-functions-key", app.tr.MasterKey)
	} else {
		req.Header.Set("x-functions-key", app.tr.FunctionKey)
		req.Header.Set(isolation.PrincipalIDHeader, who)
	}
	req.Header.Set("content-type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// start starts a run of graph with id and input as who; it returns the status and body.
func (app tenantApp) start(t *testing.T, who, graph, id, input string) (int, string) {
	t.Helper()
	return app.as(t, who, "POST", "/api/graphs/"+graph+"/runs", `{"instance_id":"`+id+`","input":`+input+`}`)
}

// settled waits until run id is finished or waits for an event, and returns it. A run that
// never settles (work retried for ever) fails the test after 30 s.
func (app tenantApp) settled(t *testing.T, id string) engine.Run {
	t.Helper()
	return app.waitRun(t, id, engine.RunSettled)
}

// finished waits until run id is finished, as settled does.
func (app tenantApp) finished(t *testing.T, id string) engine.Run {
	t.Helper()
	return app.waitRun(t, id, nil)
}

func (app tenantApp) waitRun(t *testing.T, id string, done func(engine.Run) bool) engine.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	run, err := app.a.Engine.WaitRun(ctx, id, done)
	if err != nil {
		t.Fatalf("run %s never settled: %v (%s)", id, err, run.RuntimeStatus)
	}
	return run
}

// refusedBody is the runs API's 507 for the total (identity false) or an identity's share.
func refusedBody(identity bool) string {
	if identity {
		return `{"error": "` + apierror.IdentityStorageFullMessage + `"}`
	}
	return `{"error": "` + apierror.StorageFullMessage + `"}`
}

// fillTotal has each of owners start support_agent runs (each waits for its approval) with
// messages of falling sizes until the budget refuses them, so that little room is left for
// new work. It fails the test unless the budget ends up refusing new work by its total, and
// returns each owner's waiting runs, the largest first.
func (app tenantApp) fillTotal(t *testing.T, owners ...string) map[string][]string {
	t.Helper()
	waiting := map[string][]string{}
	for _, size := range []int{64 << 10, 8 << 10, 1 << 10, 64} {
		for _, owner := range owners {
			for i := 0; ; i++ {
				if i == 1000 {
					t.Fatalf("%s: 1 000 starts of %d bytes and no refusal", owner, size)
				}
				id := fmt.Sprintf("%s-%d-%d", owner, size, i)
				code, body := app.start(t, owner, "support_agent", id, `{"user_message":"refund `+strings.Repeat("y", size)+`"}`)
				if code == 507 {
					if body != refusedBody(true) && body != refusedBody(false) {
						t.Fatalf("%s's start %s: 507 %s", owner, id, body)
					}
					break
				}
				if code != 202 {
					t.Fatalf("%s's start %s: %d %.200s", owner, id, code, body)
				}
				waiting[owner] = append(waiting[owner], id)
			}
		}
	}
	for owner, ids := range waiting {
		var kept []string
		for _, id := range ids { // a step past the room left fails its run
			if run := app.settled(t, id); !run.RuntimeStatus.Finished() {
				kept = append(kept, id)
			}
		}
		waiting[owner] = kept
	}
	if code, body := app.start(t, "newcomer", "data_pipeline", "newcomer-0", `{"source_url":"s"}`); code != 507 || body != refusedBody(false) {
		t.Fatalf("a newcomer's start once the total is full: %d %.200s, want 507 for the total", code, body)
	}
	return waiting
}

// checkCancelAndPurge checks that, with the total full, the owner's cancel and the master
// key's cancel of waiting runs answer 202 (their reasons longer than the room left), another
// start is refused 507 meanwhile, and the owner's and the master key's purges answer 200 and
// make room: the start refused before is then admitted.
func (app tenantApp) checkCancelAndPurge(t *testing.T, waiting map[string][]string, owner string) {
	t.Helper()
	ids := waiting[owner]
	if len(ids) < 2 {
		t.Fatalf("%s has %d runs waiting, want 2 or more", owner, len(ids))
	}
	reason := `{"reason":"` + strings.Repeat("stop ", 2<<10) + `"}` // 10 KiB: more than the room left
	for i, who := range []string{owner, master} {
		if code, body := app.as(t, who, "POST", "/api/runs/"+ids[i]+"/cancel", reason); code != 202 {
			t.Fatalf("cancel of %s's run %s by %q with the total full: %d %.200s, want 202", owner, ids[i], who, code, body)
		}
		if run, err := app.a.Engine.GetRun(t.Context(), ids[i]); err != nil || run.RuntimeStatus != engine.StatusTerminated {
			t.Fatalf("run %s after its cancel: %v %s, want terminated", ids[i], err, run.RuntimeStatus)
		}
	}
	if code, body := app.start(t, "newcomer", "data_pipeline", "newcomer-1", `{"source_url":"s"}`); code != 507 || body != refusedBody(false) {
		t.Fatalf("a newcomer's start after the cancels: %d %.200s, want 507 for the total", code, body)
	}
	for i, who := range []string{owner, master} {
		if code, body := app.as(t, who, "DELETE", "/api/runs/"+ids[i], ""); code != 200 {
			t.Fatalf("purge of %s's run %s by %q with the total full: %d %.200s, want 200", owner, ids[i], who, code, body)
		}
		if code, _ := app.as(t, master, "GET", "/api/runs/"+ids[i], ""); code != 404 {
			t.Fatalf("run %s after its purge: %d, want 404", ids[i], code)
		}
	}
	if code, body := app.start(t, "newcomer", "data_pipeline", "newcomer-2", `{"source_url":"s"}`); code != 202 {
		t.Fatalf("a newcomer's start after the purges: %d %.200s, want 202", code, body)
	}
}

// parallel calls fn(i) for i in [0, n) on 8 goroutines.
func parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// field returns the member name of the JSON object body, decoded (nil when absent).
func field(t *testing.T, body, name string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("decode %.200s: %v", body, err)
	}
	return m[name]
}
