//go:build integration

package tablestore_test

import (
	"errors"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestIntegrationGroup_ListsOneGroupAtItsCost: on Azure Table storage, a group lists its own
// runs newest first and its unfinished runs oldest first, each page one query plus a head
// read per run among the runs of other groups; a finished run leaves the group's active
// partition, a purge its rows; a group the store cannot key is refused before any write.
func TestIntegrationGroup_ListsOneGroupAtItsCost(t *testing.T) {
	t.Parallel()
	counts := &enginetest.OpCounts{}
	queue, store, reg := memory.NewQueue(), tablestore.New(newTable(t)), runsapitest.Registry(t, examples.All)
	e, err := engine.New(engine.Options{Registry: reg, Queue: queue, Payloads: memory.NewPayloadStore(),
		Store: enginetest.CountingStore{Store: store, Counts: counts}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	start := func(graph, id, group, input string) {
		t.Helper()
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: graph, InstanceID: id, Group: group, Input: []byte(input)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct creation times at the index's precision
	}
	for i := range 30 {
		start("data_pipeline", fmt.Sprintf("other-%02d", i), fmt.Sprintf("t%d", i%3), `{"source_url":"u"}`)
		if i%10 == 0 {
			start("support_agent", fmt.Sprintf("mine-w%02d", i), "mine", `{"user_message":"refund"}`)
			start("data_pipeline", fmt.Sprintf("mine-d%02d", i), "mine", `{"source_url":"u"}`)
		}
	}
	driveQueue(t, e, queue)
	list := func(q engine.RunQuery) []string {
		t.Helper()
		counts.Reset()
		page, err := e.ListRuns(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range page.Runs {
			ids = append(ids, r.InstanceID)
		}
		if n, g := counts.Queries.Load(), counts.Gets.Load(); n != 1 || g != int64(len(ids)) {
			t.Errorf("%+v: %d queries and %d reads for %d runs, want 1 and %d", q, n, g, len(ids), len(ids))
		}
		return ids
	}
	if got := list(engine.RunQuery{Group: "mine", Limit: 3}); !slices.Equal(got, []string{"mine-d20", "mine-w20", "mine-d10"}) {
		t.Errorf("newest 3 of mine: %v", got)
	}
	if got := list(engine.RunQuery{Group: "mine", Unfinished: true, OldestFirst: true, Limit: 2}); !slices.Equal(got, []string{"mine-w00", "mine-w10"}) {
		t.Errorf("oldest unfinished of mine: %v", got)
	}
	if err := e.CancelRun(ctx, "mine-w00", "done"); err != nil {
		t.Fatal(err)
	}
	if err := e.PurgeRun(ctx, "mine-d00"); err != nil {
		t.Fatal(err)
	}
	if got := list(engine.RunQuery{Group: "mine", Unfinished: true, OldestFirst: true, Limit: 1}); !slices.Equal(got, []string{"mine-w10"}) {
		t.Errorf("oldest unfinished of mine after the cancel: %v", got)
	}
	all := list(engine.RunQuery{Group: "mine"})
	if len(all) != 5 || slices.Contains(all, "mine-d00") {
		t.Errorf("mine after the purge: %v", all)
	}
	// The table store says which partition keys it cannot update (engine.PartitionKeyChecker).
	bare, err := engine.New(engine.Options{Registry: reg, Queue: queue, Payloads: memory.NewPayloadStore(), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bare.StartRun(ctx, engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "q", Group: "it's", Input: []byte(`{"source_url":"u"}`)})
	if !errors.Is(err, engine.ErrInvalidGroup) {
		t.Errorf("group with a quote: %v, want ErrInvalidGroup", err)
	}
	if _, err := bare.GetRun(ctx, "q"); !errors.Is(err, engine.ErrRunNotFound) {
		t.Errorf("the refused run: %v, want not stored", err)
	}
}
