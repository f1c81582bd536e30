package checkpoint_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// A turn writes a checkpoint with a new version of its channel; Get reads the latest back.
func ExampleMemory() {
	ctx := context.Background()
	s := checkpoint.NewMemory(checkpoint.MemoryOptions{})
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelVersions: map[string]string{"messages": checkpoint.NextVersion("")}}
	_ = s.Put(ctx, "thread-1", "", cp, map[string]checkpoint.Value{
		"messages": {SerdeType: checkpoint.SerdeJSON, Data: []byte(`["hi"]`)},
	})
	got, _ := s.Get(ctx, checkpoint.Ref{ThreadID: "thread-1"})
	fmt.Println(string(got.Values["messages"].Data))
	// Output: ["hi"]
}
