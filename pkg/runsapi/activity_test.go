package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestService_Status_WhatARunWaitsFor_WireForm: a sleep's end, a node's retry and the
// branches waiting to retry end the status body, in this order, only when the run has them.
func TestService_Status_WhatARunWaitsFor_WireForm(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 800, time.UTC)
	runs := &fakeRuns{get: func(_ context.Context, id string) (engine.Run, error) {
		r := pendingRun(id)
		if id == "busy" {
			r.SleepingUntil, r.NodeRetry = at, &engine.NodeRetry{Attempt: 2, At: at}
			r.BranchRetries = []engine.BranchRetry{{Index: 3, Attempt: 4, At: at}}
		}
		return r, nil
	}}
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			r := runsapitest.Call(t, tr, "GET", "/api/runs/busy", "")
			want := `, "output": null, "sleeping_until": "2026-03-04T05:06:07.0000008Z", "node_retry": {"attempt": 2, "retry_at": "2026-03-04T05:06:07.0000008Z"}, ` +
				`"branches_retrying": [{"index": 3, "attempt": 4, "retry_at": "2026-03-04T05:06:07.0000008Z"}]}`
			if r.Status != 200 || !strings.HasSuffix(r.Body, want) {
				t.Fatalf("status %d %s, want it to end %s", r.Status, r.Body, want)
			}
			if r := runsapitest.Call(t, tr, "GET", "/api/runs/idle", ""); r.Status != 200 || !strings.HasSuffix(r.Body, `, "output": null}`) {
				t.Fatalf("status %d %s, want no member after output", r.Status, r.Body)
			}
		})
	}
}

// activityBody is what TestService_Status_SleepAndBranchRetries reads of a status body.
type activityBody struct {
	SleepingUntil    time.Time `json:"sleeping_until"`
	BranchesRetrying []struct {
		Index, Attempt int
		RetryAt        time.Time `json:"retry_at"`
	} `json:"branches_retrying"`
}

type napState struct {
	Items []int `json:"items"`
	Done  []int `json:"done"`
}

// napGraphs are "nap" (sleeps an hour, then ends) and "fanretry" (fans out over items; the
// branch of item 1 fails its first attempt and backs off an hour).
func napGraphs(t *testing.T) []durable.Graph {
	t.Helper()
	nb := durable.NewManifestBuilder[napState]("nap")
	nb.SetEntrypoint("nap")
	_ = nb.AddNode("nap", func(context.Context, napState) (any, error) { return nil, nil }, durable.WithHandlerName("tests.nap.nap"),
		durable.WithRoute(func(context.Context, napState) (any, error) { return durable.Sleep(time.Hour, "end"), nil }), durable.WithRouteName("tests.nap.route"))
	_ = nb.AddNode("end", func(context.Context, napState) (any, error) { return nil, nil }, durable.WithHandlerName("tests.nap.end"), durable.Terminal())
	fb := durable.NewManifestBuilder[napState]("fanretry", durable.WithPolicy(durable.GraphPolicy{
		Retry: durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Hour}}))
	fb.SetEntrypoint("plan")
	_ = fb.AddNode("plan", func(context.Context, napState) (any, error) { return nil, nil }, durable.WithHandlerName("tests.fanretry.plan"),
		durable.WithRoute(func(_ context.Context, s napState) (any, error) { return durable.Map("join", "work", s.Items), nil }), durable.WithRouteName("tests.fanretry.route"))
	_ = fb.AddNode("work", func(ctx context.Context, s napState) (any, error) {
		if b, _ := durable.BranchFrom(ctx); b.Index == 1 {
			return nil, errors.New("flaky")
		}
		return durable.Update{"done": []int{1}}, nil
	}, durable.WithHandlerName("tests.fanretry.work"), durable.WithNext("join"))
	_ = fb.AddNode("join", func(context.Context, napState) (any, error) { return nil, nil }, durable.WithHandlerName("tests.fanretry.join"), durable.Terminal())
	_ = fb.Reduce("done", durable.Append)
	var out []durable.Graph
	for _, b := range []*durable.ManifestBuilder[napState]{nb, fb} {
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// TestService_Status_SleepAndBranchRetries: on the engine, a sleeping run's status says until
// when, and a fan-out's names its branch waiting to retry and when.
func TestService_Status_SleepAndBranchRetries(t *testing.T) {
	reg := runsapitest.Registry(t, examples.All)
	for _, g := range napGraphs(t) {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	_, trs := serveRunsWith(t, engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()}, runsapi.Options{})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			nap, fan := runsapitest.UniqueID(tr, "nap"), runsapitest.UniqueID(tr, "fan")
			before := time.Now()
			runsapitest.Call(t, tr, "POST", "/api/graphs/nap/runs", `{"instance_id":"`+nap+`"}`).Expect(t, "start nap", 202, "")
			runsapitest.Call(t, tr, "POST", "/api/graphs/fanretry/runs", `{"instance_id":"`+fan+`","input":{"items":[0,1,2]}}`).Expect(t, "start fan", 202, "")
			var st activityBody
			poll := func(id string, done func() bool) {
				t.Helper()
				for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
					r := runsapitest.Call(t, tr, "GET", "/api/runs/"+id, "")
					st = activityBody{}
					if err := json.Unmarshal([]byte(r.Body), &st); err != nil {
						t.Fatalf("status %d %s: %v", r.Status, r.Body, err)
					}
					if done() {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("gave up waiting: %s", r.Body)
					}
				}
			}
			poll(nap, func() bool { return !st.SleepingUntil.IsZero() })
			if d := st.SleepingUntil.Sub(before); d < time.Hour || d > time.Hour+time.Minute {
				t.Errorf("sleeping_until %v is %v after the start, want an hour", st.SleepingUntil, d)
			}
			poll(fan, func() bool { return len(st.BranchesRetrying) > 0 })
			b := st.BranchesRetrying
			if len(b) != 1 || b[0].Index != 1 || b[0].Attempt != 2 || b[0].RetryAt.Sub(before) < time.Minute {
				t.Errorf("branches_retrying %+v, want branch 1's attempt 2 after its back-off (capped at MaxBackoff)", b)
			}
		})
	}
}
