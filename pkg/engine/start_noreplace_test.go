package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// TestEngine_StartNoReplace_FinishedRunIsKept: a start with NoReplace of an id whose run has
// finished is refused with its status and changes nothing (a trigger's redelivered message
// starts no second run), where a plain start replaces it.
func TestEngine_StartNoReplace_FinishedRunIsKept(t *testing.T) {
	t.Parallel()
	g := chainGraph(t, "once", 1, func(context.Context, counterState) (any, error) { return nil, nil })
	r := newRig(t, engine.Options{}, false, g)
	ctx := t.Context()
	if _, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "once", InstanceID: "msg-1", NoReplace: true}); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	done := r.wait(t, "msg-1")
	if done.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s", done.RuntimeStatus)
	}
	before, err := r.e.History(ctx, "msg-1", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "once", InstanceID: "msg-1", NoReplace: true})
	var exists *engine.RunExistsError
	if !errors.As(err, &exists) || exists.Status != engine.StatusCompleted || exists.InstanceID != "msg-1" {
		t.Fatalf("a second start with NoReplace: %v, want RunExistsError Completed", err)
	}
	after, err := r.e.History(ctx, "msg-1", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.e.GetRun(ctx, "msg-1")
	if err != nil || run.RuntimeStatus != engine.StatusCompleted || len(after.Events) != len(before.Events) || !run.CreatedAt.Equal(done.CreatedAt) {
		t.Fatalf("after a refused start: %+v (%v), %d rows, was %d", run, err, len(after.Events), len(before.Events))
	}
	// Without NoReplace the finished run is replaced, as before.
	if _, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: "once", InstanceID: "msg-1"}); err != nil {
		t.Fatalf("a plain start of a finished run: %v", err)
	}
}
