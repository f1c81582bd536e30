package runsapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

type familyState struct {
	N   int          `json:"n"`
	Kid *familyState `json:"kid"`
}

// familyGraphs are "family" (starts a child of "family_kid", whose state lands in "kid") and
// "family_kid" (waits for "go", then adds 1 to n).
func familyGraphs(t *testing.T) []durable.Graph {
	t.Helper()
	pb := durable.NewManifestBuilder[familyState]("family")
	pb.SetEntrypoint("start")
	_ = pb.AddNode("start", func(context.Context, familyState) (any, error) { return nil, nil }, durable.WithHandlerName("tests.family.start"),
		durable.WithRoute(func(_ context.Context, s familyState) (any, error) {
			return durable.StartChild("family_kid", familyState{N: s.N}, "done").Into("kid"), nil
		}), durable.WithRouteName("tests.family.route"))
	_ = pb.AddNode("done", func(context.Context, familyState) (any, error) { return nil, nil }, durable.WithHandlerName("tests.family.done"), durable.Terminal())
	kb := durable.NewManifestBuilder[familyState]("family_kid")
	kb.SetEntrypoint("wait")
	_ = kb.AddNode("wait", func(context.Context, familyState) (any, error) { return nil, nil }, durable.WithHandlerName("tests.kid.wait"),
		durable.WithRoute(func(context.Context, familyState) (any, error) { return durable.WaitForEvent("go", "add"), nil }), durable.WithRouteName("tests.kid.route"))
	_ = kb.AddNode("add", func(_ context.Context, s familyState) (any, error) { return durable.Update{"n": s.N + 1}, nil },
		durable.WithHandlerName("tests.kid.add"), durable.Terminal())
	_ = kb.AddEventHandler("go", func(context.Context, familyState, json.RawMessage) (any, error) { return nil, nil })
	var out []durable.Graph
	for _, b := range []*durable.ManifestBuilder[familyState]{pb, kb} {
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// statusOf reads a run's status body as a map.
func statusOf(t *testing.T, tr funchosttest.Transport, id, key string) (int, map[string]any) {
	t.Helper()
	r := as(t, tr, "alice", key, "GET", "/api/runs/"+id, "")
	var m map[string]any
	_ = json.Unmarshal([]byte(r.Body), &m)
	return r.Status, m
}

// TestService_ChildRuns_LinkedAndOwnedLikeTheParent: a run's status links it to its child
// runs and back; under isolation the child is its parent's owner's run, hidden from others;
// a start cannot take a child's id.
func TestService_ChildRuns_LinkedAndOwnedLikeTheParent(t *testing.T) {
	reg := runsapitest.Registry(t, examples.All)
	for _, g := range familyGraphs(t) {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	_, trs := serveRunsWith(t, engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()},
		runsapi.Options{AuthLevel: "function", Isolation: newIsolation(t, "127.0.0.1/32")})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			key, id := tr.FunctionKey, runsapitest.UniqueID(tr, "family")
			as(t, tr, "alice", key, "POST", "/api/graphs/family/runs", `{"instance_id":"`+id+`","input":{"n":1}}`).Expect(t, "start", 202, "")
			var kid string
			for deadline := time.Now().Add(15 * time.Second); kid == ""; time.Sleep(10 * time.Millisecond) {
				_, m := statusOf(t, tr, id, key)
				if ids, _ := m["child_instance_ids"].([]any); len(ids) == 1 {
					kid, _ = ids[0].(string)
				} else if time.Now().After(deadline) {
					t.Fatalf("no child listed: %v", m)
				}
			}
			code, m := statusOf(t, tr, id, key)
			if cs, _ := m["custom_status"].(map[string]any); code != 200 || cs["waiting_for_child"] != kid || m["parent_instance_id"] != nil {
				t.Fatalf("parent status %d %v", code, m)
			}
			if code, m = statusOf(t, tr, kid, key); code != 200 || m["parent_instance_id"] != id || m["child_instance_ids"] != nil {
				t.Fatalf("child status %d %v", code, m)
			}
			as(t, tr, "bob", key, "GET", "/api/runs/"+kid, "").Expect(t, "bob reads the child", 404, `{"error": "instance not found"}`)
			if ids := listedIDs(t, as(t, tr, "alice", key, "GET", "/api/runs?graph_name=family_kid", "")); !contains(ids, kid) {
				t.Errorf("alice does not list her child run: %v", ids)
			}
			as(t, tr, "alice", key, "POST", "/api/runs/"+kid+"/events/go", `{}`).Expect(t, "release the child", 202, "")
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, m = statusOf(t, tr, id, key); m["runtime_status"] == "Completed" {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("parent never completed: %v", m)
				}
			}
			if out, _ := m["output"].(map[string]any); mustJSON(out["state"]) != `{"kid": {"kid": null, "n": 2}, "n": 1}` {
				t.Fatalf("parent output %v", m["output"])
			}
			h := as(t, tr, "alice", key, "GET", "/api/runs/"+id+"/history", "")
			if !strings.Contains(h.Body, `"type": "child_started"`) || !strings.Contains(h.Body, `"child_instance_id": "`+kid+`"`) {
				t.Fatalf("parent history %s", h.Body)
			}
			as(t, tr, "alice", key, "POST", "/api/graphs/family/runs", `{"instance_id":"`+engine.ChildRunPrefix+`mine"}`).
				Expect(t, "start with a child's id", 400, `{"error": "invalid instance_id: ids starting with 'child~' are reserved for child runs"}`)
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return runsapitest.Dumps(string(b))
}

// TestService_ChildRuns_AwaitedPurgeAndStatusBody: the status body gains its two members only
// for runs that have them, in this order; a purge of a child its parent waits for is a 409.
func TestService_ChildRuns_AwaitedPurgeAndStatusBody(t *testing.T) {
	runs := &fakeRuns{
		get: func(_ context.Context, id string) (engine.Run, error) {
			r := pendingRun(id)
			r.ParentInstanceID, r.ChildInstanceIDs = "p", []string{"child~a", "child~b"}
			return r, nil
		},
		purge: func(_ context.Context, id string) error {
			return &engine.ChildAwaitedError{InstanceID: id, Status: engine.StatusCompleted, ParentInstanceID: "p"}
		},
	}
	for _, tr := range serveFake(t, runs, runsapi.Options{}) {
		t.Run(tr.Name, func(t *testing.T) {
			r := runsapitest.Call(t, tr, "GET", "/api/runs/k", "")
			if want := `, "output": null, "parent_instance_id": "p", "child_instance_ids": ["child~a", "child~b"]}`; r.Status != 200 || !strings.HasSuffix(r.Body, want) {
				t.Fatalf("status %d %s, want it to end %s", r.Status, r.Body, want)
			}
			runsapitest.Call(t, tr, "DELETE", "/api/runs/k", "").Expect(t, "purge an awaited child", 409,
				`{"error": "instance is awaited by its parent run", "instance_id": "k", "runtime_status": "Completed", "parent_instance_id": "p"}`)
		})
	}
}

// TestInProcessGraph_ChildRun_Refused: an in-process run stores nothing, so a route that
// starts a child run fails it, naming the child's graph.
func TestInProcessGraph_ChildRun_Refused(t *testing.T) {
	g := runsapi.NewInProcessGraph(familyGraphs(t)[0], 0)
	_, err := g.Invoke(t.Context(), host.Request{Input: json.RawMessage(`{"n":1}`)})
	if err == nil || err.Error() != "run family in process: node 'start' starts a child run of graph 'family_kid': child runs need a durable run" {
		t.Fatalf("Invoke: %v", err)
	}
}
