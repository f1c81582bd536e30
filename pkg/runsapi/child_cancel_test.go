package runsapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

type relayState struct {
	N int `json:"n"`
}

// relayGraph is "relay", a graph that delegates to itself: "delegate" starts a child run of
// "relay" and, once the child is done, delegates again; when the family's bounds refuse the
// child, its failure route "hold" waits for "go".
func relayGraph(t *testing.T) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[relayState]("relay")
	b.SetEntrypoint("delegate")
	noop := func(context.Context, relayState) (any, error) { return nil, nil }
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddNode("delegate", noop, durable.WithHandlerName("tests.relay.delegate"), durable.WithFailureRoute("hold"),
		durable.WithRoute(func(context.Context, relayState) (any, error) {
			return durable.StartChild("relay", relayState{}, "delegate"), nil
		}), durable.WithRouteName("tests.relay.route")))
	must(b.AddNode("hold", noop, durable.WithHandlerName("tests.relay.hold"),
		durable.WithRoute(func(context.Context, relayState) (any, error) { return durable.WaitForEvent("go", "done"), nil }),
		durable.WithRouteName("tests.relay.hold.route")))
	must(b.AddNode("done", noop, durable.WithHandlerName("tests.relay.done"), durable.Terminal()))
	must(b.AddEventHandler("go", func(context.Context, relayState, json.RawMessage) (any, error) { return nil, nil }))
	g, err := b.Build()
	must(err)
	return g
}

// heldSteps holds back the work items of a cancel's intents (the family's cancel in the
// background) until released.
type heldSteps struct {
	mu   sync.Mutex
	held [][]byte
}

func (h *heldSteps) onEnqueue(body []byte) (int, error) {
	if !strings.Contains(string(body), `"cx":`) {
		return 1, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = append(h.held, body)
	return 0, nil
}

// release puts the held items on q, and lets the next ones through.
func (h *heldSteps) release(t *testing.T, q engine.WorkQueue) {
	t.Helper()
	h.mu.Lock()
	held := h.held
	h.held = nil
	h.mu.Unlock()
	for _, body := range held {
		if err := q.Enqueue(context.Background(), body, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestService_SelfDelegatingFamily_CancelAnswersAtOnceAndTheFamilyEndsTerminated: one start of
// a graph that delegates to itself makes a family within its bounds (MaxChildDepth below the
// root, the deepest refused a child of its own); the root's cancel answers 202 once the root
// is cancelled, before anything below it, and the family then ends terminated in the
// background.
func TestService_SelfDelegatingFamily_CancelAnswersAtOnceAndTheFamilyEndsTerminated(t *testing.T) {
	reg := runsapitest.Registry(t, examples.All)
	if err := reg.Register(relayGraph(t)); err != nil {
		t.Fatal(err)
	}
	mq := memory.NewQueue()
	var hold heldSteps
	_, trs := serveRunsWith(t, engine.Options{Registry: reg, Store: memory.NewStore(), Queue: &enginetest.FaultQueue{WorkQueue: mq, OnEnqueue: hold.onEnqueue},
		Payloads: memory.NewPayloadStore(), PollInterval: 10 * time.Millisecond}, runsapi.Options{AuthLevel: "function", Isolation: newIsolation(t, "127.0.0.1/32")})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			key, id := tr.FunctionKey, runsapitest.UniqueID(tr, "relay")
			as(t, tr, "alice", key, "POST", "/api/graphs/relay/runs", `{"instance_id":"`+id+`","input":{}}`).Expect(t, "start", 202, "")
			runs := []string{id}
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				code, m := statusOf(t, tr, runs[len(runs)-1], key)
				ids, _ := m["child_instance_ids"].([]any)
				cs, _ := m["custom_status"].(map[string]any)
				switch {
				case code == 200 && len(ids) == 1:
					runs = append(runs, ids[0].(string))
					continue
				case code == 200 && cs["waiting_for_event"] == "go":
				case time.Now().After(deadline):
					t.Fatalf("the family stopped at %d runs: %d %v", len(runs), code, m)
				default:
					continue
				}
				break
			}
			if len(runs) != engine.DefaultMaxChildDepth+1 {
				t.Fatalf("one start made a family of %d runs, want %d: the root and %d levels below it", len(runs), engine.DefaultMaxChildDepth+1, engine.DefaultMaxChildDepth)
			}
			for _, rid := range runs {
				if _, m := statusOf(t, tr, rid, key); m["runtime_status"] != "Running" {
					t.Fatalf("run %s before the cancel: %v", rid, m)
				}
			}
			as(t, tr, "alice", key, "POST", "/api/runs/"+id+"/cancel", `{"reason":"enough"}`).
				Expect(t, "cancel", 202, `{"instance_id": "`+id+`", "terminated": true, "reason": "enough"}`)
			// The answer came once the root was cancelled; the runs below wait for the
			// background (held back here).
			if _, m := statusOf(t, tr, id, key); m["runtime_status"] != "Terminated" {
				t.Fatalf("root after its cancel answered: %v", m)
			}
			for _, rid := range runs[1:] {
				if _, m := statusOf(t, tr, rid, key); m["runtime_status"] != "Running" {
					t.Fatalf("run %s was %v when the root's cancel answered: the cancel walked the family", rid, m["runtime_status"])
				}
			}
			hold.release(t, mq)
			for i, rid := range runs {
				want := "enough"
				if i > 0 {
					want = "parent run '" + runs[i-1] + "' was cancelled: enough"
				}
				for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					hold.release(t, mq) // each step's own item, held as it comes
					_, m := statusOf(t, tr, rid, key)
					if m["runtime_status"] == "Terminated" {
						if m["output"] != want {
							t.Fatalf("run %s: reason %v, want %q", rid, m["output"], want)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("run %s never terminated: %v", rid, m)
					}
				}
			}
		})
	}
}
