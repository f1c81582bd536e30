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

// tooLargePayloads refuses, as Azure Blob storage's payload store does past
// engine.MaxPayloadBytes (before any upload), every payload that holds marker.
type tooLargePayloads struct {
	engine.PayloadStore
	marker string
}

func (p tooLargePayloads) Put(ctx context.Context, key string, data []byte) error {
	if strings.Contains(string(data), p.marker) {
		return fmt.Errorf("put payload %s: %d bytes: %w", key, len(data), engine.ErrTooLarge)
	}
	return p.PayloadStore.Put(ctx, key, data)
}

// A branch result the payload store refuses as too large (Azure's payload store past
// MaxPayloadBytes) fails the branch as one refused for want of room does: the run fails
// naming the refusal, and no work item fails or comes back for ever.
func TestEngine_FanOut_SpillRefusedTooLarge_FailsTheBranch(t *testing.T) {
	t.Parallel()
	const marker = "too-large"
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
		Payloads: tooLargePayloads{PayloadStore: memory.NewPayloadStore(), marker: marker}, Logger: testLogger(t)})
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
