package runsclient_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// outage is a model endpoint that is down while down is set; it counts the calls per run and
// node.
type outage struct {
	down  atomic.Bool
	mu    sync.Mutex
	calls map[string]int // "<run id>/<node>"
}

// graph builds "outage": plan → classify (calls the model, failing for good while down) → reply.
func (o *outage) graph(t *testing.T) durable.Graph {
	t.Helper()
	type st struct {
		Steps []string `json:"steps"`
	}
	b := durable.NewManifestBuilder[st]("outage")
	b.SetEntrypoint("plan")
	node := func(name string, model bool) durable.NodeFunc[st] {
		return func(ctx context.Context, s st) (any, error) {
			info, _ := durable.StepInfoFrom(ctx)
			o.mu.Lock()
			o.calls[info.RunID+"/"+name]++
			o.mu.Unlock()
			if model && o.down.Load() {
				return nil, durable.NonRetryable(errors.New("model endpoint unavailable (503)"))
			}
			return durable.Update{"steps": append(slices.Clone(s.Steps), name)}, nil
		}
	}
	for _, err := range []error{
		b.AddNode("plan", node("plan", false), durable.WithHandlerName("test.client.plan"), durable.WithNext("classify")),
		b.AddNode("classify", node("classify", true), durable.WithHandlerName("test.client.classify"), durable.WithNext("reply")),
		b.AddNode("reply", node("reply", false), durable.WithHandlerName("test.client.reply"), durable.Terminal()),
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

func (o *outage) count(id, node string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls[id+"/"+node]
}

// TestClient_Rewind_RealServer: runs failed by a model outage are rewound through the client,
// one by its id and the others by a failure window, and complete without running their
// committed steps again; a second rewind by the window rewinds none, and a completed run's
// rewind is ErrConflict naming its status.
func TestClient_Rewind_RealServer(t *testing.T) {
	o := &outage{calls: map[string]int{}}
	c := serveMemory(t, o.graph(t)).client(t)
	ctx := t.Context()
	since := time.Now().Add(-time.Minute)
	o.down.Store(true)
	ids := []string{"o-1", "o-2", "o-3"}
	for _, id := range ids {
		if _, err := c.StartRun(ctx, "outage", struct{}{}, &runsclient.StartOptions{InstanceID: id}); err != nil {
			t.Fatal(err)
		}
		if st, err := c.WaitForCompletion(ctx, id); err != nil || st.RuntimeStatus != runsclient.StatusFailed {
			t.Fatalf("%s during the outage: %+v, %v; want Failed", id, st, err)
		}
	}
	o.down.Store(false)

	if _, err := c.Rewind(ctx, "o-1", "the model is back"); err != nil {
		t.Fatal(err)
	}
	var rewound []string
	for page, err := range c.RewindAll(ctx, runsclient.RewindFilter{GraphName: "outage", FailedAfter: since, Limit: 1, Reason: "outage over"}) {
		if err != nil {
			t.Fatal(err)
		}
		rewound = append(rewound, page.Rewound...)
	}
	slices.Sort(rewound)
	if !slices.Equal(rewound, []string{"o-2", "o-3"}) {
		t.Fatalf("rewound by the window: %v, want o-2 and o-3 (o-1 was rewound by its id)", rewound)
	}
	for _, id := range ids {
		st, err := c.WaitForCompletion(ctx, id)
		if err != nil || st.RuntimeStatus != runsclient.StatusCompleted {
			t.Fatalf("%s after its rewind: %+v, %v; want Completed", id, st, err)
		}
		if p, cl, r := o.count(id, "plan"), o.count(id, "classify"), o.count(id, "reply"); p != 1 || cl != 2 || r != 1 {
			t.Errorf("%s ran plan %d, classify %d, reply %d times; want 1, 2, 1", id, p, cl, r)
		}
	}
	again, err := c.RewindRuns(ctx, runsclient.RewindFilter{GraphName: "outage", FailedAfter: since})
	if err != nil || len(again.Rewound) != 0 {
		t.Fatalf("a second rewind by the window: %+v, %v; want none", again, err)
	}
	_, err = c.Rewind(ctx, "o-1", "")
	var apiErr *runsclient.Error
	if !errors.Is(err, runsclient.ErrConflict) || !errors.As(err, &apiErr) || apiErr.Message != "run 'o-1' is Completed; only a Failed run can be rewound" {
		t.Fatalf("the rewind of a completed run: %v", err)
	}
}
