package runsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost/hosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// contractMaxSteps is the max-steps bound of the looping test graph.
const contractMaxSteps = 5

// gate holds the first node of the "gated" test graph until released, so that a test can
// send an event before the run reaches its wait.
var gates = struct {
	ch map[string]chan struct{}
}{ch: map[string]chan struct{}{}}

type loopState struct {
	Count int `json:"count"`
}

type gatedState struct {
	Gate     string `json:"gate"`
	Approved bool   `json:"approved"`
}

// testGraphs returns "loop" (a self-loop that never completes) and "gated" (waits for
// "approval" after a first node that blocks on its gate).
func testGraphs(t *testing.T) []durable.Graph {
	t.Helper()
	lb := durable.NewManifestBuilder[loopState]("loop")
	lb.SetEntrypoint("spin")
	_ = lb.AddNode("spin", func(_ context.Context, s loopState) (any, error) { return durable.Update{"count": s.Count + 1}, nil },
		durable.WithHandlerName("tests.loop.spin"), durable.WithRouteName("tests.loop.route"),
		durable.WithRoute(func(context.Context, loopState) (any, error) { return "spin", nil }))
	loop, err := lb.Build()
	if err != nil {
		t.Fatal(err)
	}
	gb := durable.NewManifestBuilder[gatedState]("gated")
	gb.SetEntrypoint("hold")
	_ = gb.AddNode("hold", func(ctx context.Context, s gatedState) (any, error) {
		select {
		case <-gates.ch[s.Gate]:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, durable.WithHandlerName("tests.gated.hold"), durable.WithRouteName("tests.gated.route"),
		durable.WithRoute(func(context.Context, gatedState) (any, error) {
			return durable.WaitForEvent("approval", "finish"), nil
		}))
	_ = gb.AddNode("finish", func(context.Context, gatedState) (any, error) { return nil, nil },
		durable.WithHandlerName("tests.gated.finish"), durable.Terminal())
	_ = gb.AddEventHandler("approval", func(_ context.Context, _ gatedState, payload json.RawMessage) (any, error) {
		var m struct {
			Approved bool `json:"approved"`
		}
		_ = json.Unmarshal(payload, &m)
		return durable.Update{"approved": m.Approved}, nil
	})
	gated, err := gb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return []durable.Graph{loop, gated}
}

// serveEngine serves the service over a real engine on the memory backend through both
// transports. The registry holds the three examples and the test graphs.
func serveEngine(t *testing.T) []hosttest.Transport {
	t.Helper()
	reg := exampleRegistry(t)
	for _, g := range testGraphs(t) {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	logger := hosttest.TestLogger(t)
	eng, err := engine.NewEngine(engine.EngineOptions{
		Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Logger: logger, Policies: map[string]engine.GraphPolicy{"loop": {MaxSteps: contractMaxSteps}},
	})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, Logger: logger})
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatalf("FunctionApp: %v", err)
	}
	return hosttest.Transports(t, app)
}

// dumps rewrites compact JSON in the API's json.dumps style.
func dumps(compactJSON string) string { return string(pyjson.AppendReformat(nil, []byte(compactJSON))) }

// statusView is a decoded status body.
type statusView struct {
	RuntimeStatus string          `json:"runtime_status"`
	CustomStatus  json.RawMessage `json:"custom_status"`
	Output        json.RawMessage `json:"output"`
}

func (s statusView) waitingFor() string {
	var cs struct {
		Waiting string `json:"waiting_for_event"`
	}
	_ = json.Unmarshal(s.CustomStatus, &cs)
	return cs.Waiting
}

// poll GETs the run's status every 10 ms until done reports true (at most 15 s) and returns
// the last response.
func poll(t *testing.T, tr hosttest.Transport, id string, done func(statusView) bool) response {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := call(t, tr, "GET", "/api/runs/"+id, "")
		if res.status != 200 {
			t.Fatalf("GET status of %s: %d %s", id, res.status, res.body)
		}
		var v statusView
		if err := json.Unmarshal([]byte(res.body), &v); err != nil {
			t.Fatalf("decode status %s: %v", res.body, err)
		}
		if done(v) {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not get there in time; last status %s", id, res.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func finished(v statusView) bool {
	return v.RuntimeStatus == "Completed" || v.RuntimeStatus == "Failed" || v.RuntimeStatus == "Terminated"
}

func waiting(v statusView) bool { return v.RuntimeStatus == "Running" && v.waitingFor() != "" }

// start posts a start request with an explicit instance id and checks the 202.
func start(t *testing.T, tr hosttest.Transport, graph, id, input string) {
	t.Helper()
	body := fmt.Sprintf(`{"instance_id": %q, "input": %s}`, id, input)
	res := call(t, tr, "POST", "/api/graphs/"+graph+"/runs", body)
	want := fmt.Sprintf(`{"id": "%[2]s", "statusQueryGetUri": "%[1]s/api/runs/%[2]s", "sendEventPostUri": "%[1]s/api/runs/%[2]s/events/{eventName}", "terminatePostUri": "%[1]s/api/runs/%[2]s/cancel"}`, tr.BaseURL, id)
	res.expect(t, "start "+graph, 202, want)
	if res.header.Get("Location") != tr.BaseURL+"/api/runs/"+id || res.header.Get("Retry-After") != "10" {
		t.Fatalf("start headers: Location %q Retry-After %q", res.header.Get("Location"), res.header.Get("Retry-After"))
	}
}

// statusBody is the expected status body for a run.
func statusBody(id, runtime, custom, input, output string) string {
	return dumps(fmt.Sprintf(`{"instance_id":%q,"runtime_status":%q,"custom_status":%s,"input":%s,"output":%s}`, id, runtime, custom, input, output))
}

func custom4(graph, hash, node string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_version":"0.1.0","graph_hash":%q,"current_node":%q}`, graph, hash, node)
}

func custom6(graph, hash, node, event, resume string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_version":"0.1.0","graph_hash":%q,"current_node":%q,"waiting_for_event":%q,"resume_node":%q}`, graph, hash, node, event, resume)
}

func runInput(graph, hash, initial string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_hash":%q,"initial_state":%s,"current_node":null,"metadata":{}}`, graph, hash, initial)
}

func completedOutput(graph, hash, final, state string) string {
	return fmt.Sprintf(`{"graph_name":%q,"graph_version":"0.1.0","graph_hash":%q,"final_node":%q,"state":%s}`, graph, hash, final, state)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// uniqueID names a run per transport and case, so both transports share nothing.
func uniqueID(tr hosttest.Transport, name string) string {
	return tr.Name + "-" + strings.ReplaceAll(name, " ", "-")
}
