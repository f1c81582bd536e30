package durabletest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

type tally struct {
	N     int   `json:"n"`
	Seen  []int `json:"seen"`
	Total int   `json:"total"`
}

// tallyGraph fans "count" out over 0..n-1 and sums at "sum"; ran records the order the
// branches ran in.
func tallyGraph(t testing.TB, ran *[]int, mu *sync.Mutex) durable.GraphRegistration[tally] {
	t.Helper()
	b := durable.NewManifestBuilder[tally]("tally")
	b.SetEntrypoint("start")
	_ = b.AddStep("start", func(_ context.Context, s tally) (tally, error) { return s, nil },
		durable.WithDecide(func(_ context.Context, s tally) (durable.RouteDecision, error) {
			items := make([]int, s.N)
			for i := range items {
				items[i] = i
			}
			return durable.Map("sum", "count", items), nil
		}))
	_ = b.AddStep("count", func(ctx context.Context, s tally) (tally, error) {
		i, err := durable.BranchItem[int](ctx)
		if err != nil {
			return s, err
		}
		mu.Lock()
		*ran = append(*ran, i)
		mu.Unlock()
		s.Seen = append(s.Seen, i)
		return s, nil
	})
	_ = b.AddStep("sum", func(_ context.Context, s tally) (tally, error) {
		for _, v := range s.Seen {
			s.Total += v
		}
		return s, nil
	}, durable.Terminal())
	if err := b.Reduce("seen", durable.Append); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestKit_ShuffleSeed_BranchesFinishInAnotherOrderSameJoin: without a seed the branches run in
// branch order; with one in a seeded order (the same for the same seed), and the joined state
// is the same.
func TestKit_ShuffleSeed_BranchesFinishInAnotherOrderSameJoin(t *testing.T) {
	orders := map[string]int64{}
	for _, seed := range []int64{0, 1, 2, 3, 1} {
		var ran []int
		var mu sync.Mutex
		kit := durabletest.New(t, tallyGraph(t, &ran, &mu), durabletest.Options{ShuffleSeed: seed})
		kit.Start("t1", tally{N: 8})
		got := kit.Final("t1")
		if !slices.Equal(got.Seen, []int{0, 1, 2, 3, 4, 5, 6, 7}) || got.Total != 28 {
			t.Fatalf("seed %d: joined %+v", seed, got)
		}
		order := fmt.Sprint(ran)
		if seed == 0 && order != "[0 1 2 3 4 5 6 7]" {
			t.Fatalf("without a seed the branches ran in order %s", order)
		}
		if prev, ok := orders[order]; ok && prev != seed {
			t.Fatalf("seeds %d and %d ran the branches in the same order %s", prev, seed, order)
		}
		if prev, ok := orders[order]; !ok || prev == seed {
			orders[order] = seed
		}
	}
	if len(orders) != 4 {
		t.Fatalf("orders %v: the same seed should repeat its order, different seeds differ", orders)
	}
}

// TestKit_Faults_BranchRetriedAndJoinedWithReducers: a fault on a branch's node is retried under
// the policy like any handler error, and the join still uses the graph's reducers.
func TestKit_Faults_BranchRetriedAndJoinedWithReducers(t *testing.T) {
	var ran []int
	var mu sync.Mutex
	kit := durabletest.New(t, tallyGraph(t, &ran, &mu), durabletest.Options{
		Faults: map[string]int{"count": 2},
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}},
	})
	kit.Start("t1", tally{N: 4})
	kit.Advance(time.Minute)
	if got := kit.Final("t1"); !slices.Equal(got.Seen, []int{0, 1, 2, 3}) || got.Total != 6 {
		t.Fatalf("joined %+v", got)
	}
}
