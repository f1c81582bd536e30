package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Typed accessors read a run's status without parsing JSON by hand.
func ExampleDecodeOutput() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustSupportAgent())
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	run, _ := e.StartRun(ctx, engine.StartRunRequest{GraphName: "support_agent", InstanceID: "t-1",
		Input: json.RawMessage(`{"user_message":"I want a refund"}`)})
	run, _ = e.WaitRun(ctx, run.InstanceID, func(r engine.Run) bool { _, waiting := r.WaitingFor(); return waiting })
	event, _ := run.WaitingFor()
	p, _ := run.Progress()
	fmt.Println(event, p.CurrentNode, "->", p.ResumeNode)
	_ = e.RaiseEvent(ctx, run.InstanceID, "approval", json.RawMessage(`{"approved":true,"reviewer":"ana"}`))
	run, _ = e.WaitRun(ctx, run.InstanceID, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	out, _ := engine.DecodeOutput[examples.SupportState](run)
	fmt.Println(out.FinalNode, *out.State.Reviewer)
	// Output:
	// approval classify_request -> draft_reply
	// finalize_reply ana
}

func TestRun_TypedAccessors(t *testing.T) {
	t.Parallel()
	failed := engine.Run{InstanceID: "f", RuntimeStatus: engine.StatusFailed, Output: json.RawMessage(`"execute_node failed: boom"`)}
	if got := failed.FailureMessage(); got != "execute_node failed: boom" {
		t.Fatalf("FailureMessage = %q", got)
	}
	if _, err := engine.DecodeOutput[examples.SupportState](failed); !errors.Is(err, engine.ErrRunNotCompleted) {
		t.Fatalf("DecodeOutput of a failed run: %v", err)
	}
	pending := engine.Run{RuntimeStatus: engine.StatusPending, CustomStatus: json.RawMessage("null")}
	if _, ok := pending.Progress(); ok {
		t.Fatal("Progress of a pending run reports ok")
	}
	executing := engine.Run{RuntimeStatus: engine.StatusRunning, CustomStatus: json.RawMessage(`{"graph_name":"g","graph_version":"1","graph_hash":"h","current_node":"n"}`)}
	if ev, ok := executing.WaitingFor(); ok || ev != "" {
		t.Fatalf("WaitingFor of an executing run = %q, %v", ev, ok)
	}
	done := engine.Run{RuntimeStatus: engine.StatusCompleted, Output: json.RawMessage(`{"graph_name":"g","graph_version":"1","graph_hash":"h","final_node":"end","state":{"user_message":"m","tags":["a"]}}`)}
	s, err := engine.DecodeState[examples.SupportState](done)
	if err != nil || s.UserMessage != "m" || len(s.Tags) != 1 {
		t.Fatalf("DecodeState = %+v, %v", s, err)
	}
}
