package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

type lateState struct {
	N int `json:"n"`
}

// TestExecuteNode_TimeoutAndStepContext: without a timeout the handler's result counts; with
// one, a step context that ends first is not a timeout of the handler: its error comes back as
// is, for the engine to leave the work item to a retry.
func TestExecuteNode_TimeoutAndStepContext(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[lateState]("late")
	b.SetEntrypoint("n")
	if err := b.AddNode("n", func(ctx context.Context, _ lateState) (any, error) {
		<-ctx.Done()
		return durable.Update{"n": 1}, nil
	}, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if state, err := executeNode(ctx, g, "n", 0, json.RawMessage(`{}`)); err != nil || string(state) != `{"n":1}` {
		t.Fatalf("executeNode without timeout = %s, %v", state, err)
	}
	if _, err := executeNode(ctx, g, "n", time.Hour, json.RawMessage(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("executeNode on a cancelled step = %v, want context.Canceled", err)
	}
	_, err = executeNode(t.Context(), g, "n", time.Millisecond, json.RawMessage(`{}`))
	var herr *durable.HandlerError
	if !errors.As(err, &herr) || !errors.Is(err, context.DeadlineExceeded) || herr.Name != "n" {
		t.Fatalf("executeNode past its deadline = %v, want a timed-out attempt of n", err)
	}
}
