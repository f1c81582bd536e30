package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// refusingPayloads refuses, as a full store does, every payload that holds marker.
type refusingPayloads struct {
	engine.PayloadStore
	marker string
}

func (p refusingPayloads) Put(ctx context.Context, key string, data []byte) error {
	if strings.Contains(string(data), p.marker) {
		return fmt.Errorf("put %s: %w", key, engine.ErrStorageFull)
	}
	return p.PayloadStore.Put(ctx, key, data)
}

// A branch result the payload store refuses for want of room fails the branch, as a refused
// batch does: the run fails naming the limit, and the branch's work item is settled instead
// of coming back for ever.
func TestEngine_FanOut_SpillRefusedForRoom_FailsTheBranch(t *testing.T) {
	t.Parallel()
	const marker = "refuse-me"
	reg := durable.NewRegistry()
	if err := reg.Register(fanGraph(t, "fan", func(ctx context.Context, s fanState) (any, error) {
		if info, _ := durable.BranchFrom(ctx); info.Index == 1 {
			return durable.Update{"note": marker + strings.Repeat("x", 64<<10)}, nil
		}
		return fanWork(ctx, s)
	})); err != nil {
		t.Fatal(err)
	}
	q := memory.NewQueue()
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: q,
		Payloads: refusingPayloads{PayloadStore: memory.NewPayloadStore(), marker: marker}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	run, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "fan", Input: json.RawMessage(fanInput(3))})
	if err != nil {
		t.Fatal(err)
	}
	failures := 0
	for range 1000 {
		msgs, err := q.Receive(t.Context(), 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		if err := e.HandleWorkItem(t.Context(), msgs[0].Body, msgs[0].DequeueCount); err != nil {
			failures++
			t.Logf("work item failed: %v", err)
			continue // left invisible: a redelivery would fail alike
		}
		if err := q.Delete(t.Context(), msgs[0]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.GetRun(t.Context(), run.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	if failures > 0 || got.RuntimeStatus != engine.StatusFailed || !strings.Contains(string(got.Output), "branch result cannot be stored") {
		t.Fatalf("%d failed work items; run %s output %s, want the run failed by its branch, naming the refusal", failures, got.RuntimeStatus, got.Output)
	}
}
