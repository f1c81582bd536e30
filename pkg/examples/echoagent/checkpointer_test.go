package echoagent_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// A thread lives in the checkpointer, not in the graph: a new graph on the same
// checkpointer (a restarted process on shared storage) reads the same state and history.
func TestEchoAgent_StateLivesInTheCheckpointer(t *testing.T) {
	saver := checkpoint.NewMemory(checkpoint.MemoryOptions{})
	first := echoagent.New(echoagent.Options{Checkpointer: saver})
	for _, msg := range []string{"one", "two", "three"} {
		if _, err := invokeEcho(t, first, "t1", msg); err != nil {
			t.Fatal(err)
		}
	}
	again := echoagent.New(echoagent.Options{Checkpointer: saver})
	view, err := again.GetState(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	st := view.Values.(echoagent.State)
	if len(st.Messages) != 6 || st.Messages[5].Content != "three" || view.Metadata["step"] != 3 {
		t.Fatalf("state after restart = %+v %v", st, view.Metadata)
	}
	hist, err := again.GetStateHistory(t.Context(), platform.CheckpointRef{ThreadID: "t1"})
	if err != nil || len(hist) != 3 {
		t.Fatalf("history = %d views, %v; want 3", len(hist), err)
	}
	for i, v := range hist {
		if v.Metadata["step"] != 3-i {
			t.Errorf("history[%d] step = %v; want %d (newest first)", i, v.Metadata["step"], 3-i)
		}
	}
	// Starting at a checkpoint id includes it.
	id := hist[1].Config["configurable"].(map[string]any)["checkpoint_id"].(string)
	from, err := again.GetStateHistory(t.Context(), platform.CheckpointRef{ThreadID: "t1", ID: id})
	if err != nil || len(from) != 2 || from[0].Metadata["step"] != 2 {
		t.Fatalf("history from step 2 = %d views, %v", len(from), err)
	}
	if err := again.DeleteThread(t.Context(), "t1"); err != nil {
		t.Fatal(err)
	}
	if view, _ := first.GetState(t.Context(), "t1"); view.Values != nil {
		t.Fatalf("state after delete = %+v; want empty", view.Values)
	}
}

// Retention: a thread keeps its newest 20 checkpoints.
func TestEchoAgent_KeepsTwentyCheckpoints(t *testing.T) {
	saver := checkpoint.NewMemory(checkpoint.MemoryOptions{})
	g := echoagent.New(echoagent.Options{Checkpointer: saver})
	for range 25 {
		if _, err := invokeEcho(t, g, "t1", "x"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := saver.List(t.Context(), "t1", "", checkpoint.ListOptions{})
	if err != nil || len(got) != 20 {
		t.Fatalf("checkpoints = %d, %v; want 20", len(got), err)
	}
}
