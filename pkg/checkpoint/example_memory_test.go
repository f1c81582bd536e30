package checkpoint_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// An in-process saver bounded to 100 threads and 8 MiB (for demos and tests; it forgets
// everything on restart). Each turn of a thread commits a checkpoint; List reads them newest
// first.
func ExampleNewMemory() {
	ctx := context.Background()
	s := checkpoint.NewMemory(checkpoint.MemoryOptions{MaxThreads: 100, MaxBytes: 8 << 20})

	parent, version := "", ""
	for turn := 1; turn <= 3; turn++ {
		version = checkpoint.NextVersion(version)
		cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ParentID: parent,
			ChannelVersions: map[string]string{"turns": version}}
		data := []byte(fmt.Sprint(turn))
		if err := s.Put(ctx, "thread-1", "", cp, map[string]checkpoint.Value{"turns": {SerdeType: checkpoint.SerdeJSON, Data: data}}); err != nil {
			fmt.Println(err)
			return
		}
		parent = cp.ID
	}
	list, _ := s.List(ctx, "thread-1", "", checkpoint.ListOptions{Limit: 2})
	for _, t := range list {
		fmt.Println(string(t.Values["turns"].Data), t.Checkpoint.ParentID != "")
	}
	// Output:
	// 3 true
	// 2 true
}

// Checkpoint ids sort in creation order, so the newest is the greatest.
func ExampleNewID() {
	a, b := checkpoint.NewID(), checkpoint.NewID()
	fmt.Println(len(a), a < b)
	// Output: 36 true
}
