//go:build integration

package runsapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestIntegrationRewind_ModelOutage: on Azure Table storage, a run whose classify node spent
// its 3 attempts in a model outage is rewound through the runs API and completes without
// running its committed steps again (the handler calls counted per node); then, after a
// simulated outage that failed several runs, one rewind by filter (paged) rewinds every
// matching run once, and a second rewinds none.
func TestIntegrationRewind_ModelOutage(t *testing.T) {
	o := &modelOutage{calls: map[string]int{}, retry: true}
	eng, _ := azureEngine(t, nil, engine.Options{PollInterval: 50 * time.Millisecond}, o.graph(t))
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg := runsapitest.Registry(t, examples.All) // the engine's graphs, as azureEngine registers them
	if err := reg.Register(o.graph(t)); err != nil {
		t.Fatal(err)
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, Logger: funchosttest.TestLogger(t), AuthLevel: funchost.AuthAnonymous})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	tr := funchosttest.Transports(t, app)[0]
	call := func(method, path, body string) runsapitest.Response {
		return runsapitest.Call(t, tr, method, path, body)
	}
	wantCalls := func(id string, plan, classify, reply int) {
		t.Helper()
		if got, want := [3]int{o.count(id, "plan"), o.count(id, "classify"), o.count(id, "reply")}, [3]int{plan, classify, reply}; got != want {
			t.Fatalf("%s: handler calls plan classify reply = %v, want %v", id, got, want)
		}
	}

	// One run, rewound by id.
	since := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	o.down.Store(true)
	id := "rewind-outage-1"
	call("POST", "/api/graphs/rw_api/runs", `{"instance_id": "`+id+`"}`).Expect(t, "start", 202, "")
	failed := runsapitest.Poll(t, tr, id, isStatus("Failed"))
	if !strings.Contains(failed.Body, "model endpoint unavailable") {
		t.Fatalf("failed run %s", failed.Body)
	}
	wantCalls(id, 1, 3, 0) // its 3 attempts spent
	o.down.Store(false)
	r := call("POST", "/api/runs/"+id+"/rewind", `{"reason": "model endpoint back"}`)
	r.Expect(t, "rewind", 202, "")
	if r.Header.Get("Location") != tr.BaseURL+"/api/runs/"+id {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	done := runsapitest.Poll(t, tr, id, isStatus("Completed"))
	if !strings.Contains(done.Body, `"steps": ["plan", "classify", "reply"]`) {
		t.Fatalf("completed %s", done.Body)
	}
	wantCalls(id, 1, 4, 1) // plan never again; classify once more, from attempt 1
	call("POST", "/api/runs/"+id+"/rewind", ``).Expect(t, "rewind of a completed run", 409,
		`{"error": "run '`+id+`' is Completed; only a Failed run can be rewound", "instance_id": "`+id+`", "runtime_status": "Completed"}`)
	call("POST", "/api/runs/rewind-unknown/rewind", ``).Expect(t, "unknown run", 404, `{"error": "instance not found"}`)

	// A simulated outage fails several runs; one filtered rewind, paged, takes each once.
	o.down.Store(true)
	var want []string
	for i := range 5 {
		id := fmt.Sprintf("rewind-outage-batch-%d", i)
		want = append(want, id)
		call("POST", "/api/graphs/rw_api/runs", `{"instance_id": "`+id+`"}`).Expect(t, "start", 202, "")
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
		ids, tok = rewoundIDs(t, call("POST", "/api/runs/rewind", b+"}"))
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
	if !slices.Equal(got, want) {
		t.Fatalf("rewound %v, want %v (the run rewound by id before is not Failed)", got, want)
	}
	for _, id := range want {
		runsapitest.Poll(t, tr, id, isStatus("Completed"))
		wantCalls(id, 1, 4, 1)
	}
	if ids, tok := rewoundIDs(t, call("POST", "/api/runs/rewind", body+"}")); len(ids) != 0 || tok != "" {
		t.Fatalf("second filtered rewind rewound %v (token %q), want none", ids, tok)
	}
}
