package membudget_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// A caller's new work is refused past 7/8 of its identity's limit; a run's own steps may use
// the rest.
func ExampleNew() {
	b, _ := membudget.New(membudget.Limits{Total: 1 << 20, PerIdentity: 1024})
	ctx := membudget.NewWork(context.Background(), "alice")
	fmt.Println(b.Grow(ctx, "alice", 896))
	err := b.Grow(ctx, "alice", 1)
	fmt.Println(errors.Is(err, membudget.ErrExceeded))
	fmt.Println(b.Grow(context.Background(), "alice", 128))
	// Output:
	// <nil>
	// true
	// <nil>
}

// A route that only creates new work asks before reading a body of 200 bytes: past 7/8 of
// the limit it refuses at once, and nothing is accounted either way.
func ExampleBudget_Admits() {
	b, _ := membudget.New(membudget.Limits{Total: 1024})
	ctx := membudget.NewWork(context.Background(), "")
	fmt.Println(b.Admits(ctx, 200))
	_ = b.Grow(context.Background(), "", 800) // runs already started
	fmt.Println(errors.Is(b.Admits(ctx, 200), membudget.ErrExceeded))
	fmt.Println(b.Used())
	// Output:
	// <nil>
	// true
	// 800
}
