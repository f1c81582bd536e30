package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// isCompletionQuery reports whether q reads the completion rows of a fan-out's region.
func isCompletionQuery(q engine.Query) bool {
	for _, c := range q.Where {
		if c.Property == "Type" && c.Op == engine.CondGe && c.Value == "branch_" {
			return true
		}
	}
	return false
}

var branchIndex = regexp.MustCompile(`"br":(\d+)`)

// A branch's completion check (is every branch of its fan-out settled, so that it enqueues the
// join?) reads rows next to its own branch first, on both sides, in growing windows: whatever
// order the branches finish in — the queue's, the reverse, a shuffle — the checks of a fan-out
// of n branches read at most 8n rows in at most 3n queries in all, where reading up to the first
// missing branch after the one that finished, then from the first branch, read about n²/2
// rows when branches finish in reverse index order.
func TestEngine_FanOut_CompletionChecksReadFewRowsInAnyOrder(t *testing.T) {
	t.Parallel()
	orders := map[string]func(n int) []int{
		"in order": func(n int) []int { return seqInts(n) },
		"reversed": func(n int) []int { s := seqInts(n); slices.Reverse(s); return s },
		"shuffled": func(n int) []int {
			s := seqInts(n)
			rand.New(rand.NewPCG(uint64(n), 39)).Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
			return s
		},
	}
	for _, n := range []int{64, 256} {
		for name, order := range orders {
			t.Run(fmt.Sprintf("%d/%s", n, name), func(t *testing.T) {
				t.Parallel()
				r := newRigETags(t, true, engine.Options{}, false, fanGraph(t, "fan", nil))
				id := r.start(t, "fan", "", fanInput(n))
				ctx := context.Background()
				plan, _ := r.queue.Receive(ctx, 1, time.Minute)
				if err := r.e.HandleWorkItem(ctx, plan[0].Body, 1); err != nil {
					t.Fatal(err)
				}
				_ = r.queue.Delete(ctx, plan[0])
				items := map[int]engine.Message{}
				for len(items) < n {
					msgs, err := r.queue.Receive(ctx, engine.MaxReceive, time.Hour)
					if err != nil || len(msgs) == 0 {
						t.Fatalf("%d of %d branch items (%v)", len(items), n, err)
					}
					for _, m := range msgs {
						i, _ := strconv.Atoi(branchIndex.FindStringSubmatch(string(m.Body))[1])
						items[i] = m
					}
				}
				var rows, queries int
				r.fstore.BeforeQuery = func(q engine.Query) error {
					if isCompletionQuery(q) {
						// What the query reads: the same query on the memory store, which
						// nothing else writes meanwhile.
						page, err := r.store.Query(ctx, q)
						if err != nil {
							return err
						}
						rows += len(page.Entities)
						queries++
					}
					return nil
				}
				for _, i := range order(n) {
					if err := r.e.HandleWorkItem(ctx, items[i].Body, 1); err != nil {
						t.Fatal(err)
					}
					_ = r.queue.Delete(ctx, items[i])
				}
				r.fstore.BeforeQuery = nil
				t.Logf("%d branches %s: their completion checks read %d rows in %d queries", n, name, rows, queries)
				if rows > 8*n || queries > 3*n {
					t.Errorf("the completion checks of %d branches finishing %s read %d rows in %d queries, want at most %d in %d",
						n, name, rows, queries, 8*n, 3*n)
				}
				r.drive(t)
				assertFanDone(t, r, id, n)
			})
		}
	}
}

func seqInts(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
