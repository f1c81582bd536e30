//go:build integration

package tablestore_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestIntegrationOwner_ListsOneOwnerAtItsCost: on Azure Table storage, an owner (any
// identity, quotes and slashes included) lists its own runs newest first, each page one query
// plus a head read per run among the runs of other owners, the last page without a token; an
// owner without runs reads one empty partition; a finished run leaves the owner's active
// partition, a purge its rows. Two engines over the table share one key (SharedKey).
func TestIntegrationOwner_ListsOneOwnerAtItsCost(t *testing.T) {
	t.Parallel()
	counts := &enginetest.OpCounts{}
	queue, store, reg := memory.NewQueue(), tablestore.New(newTable(t)), runsapitest.Registry(t, examples.All)
	e, err := engine.New(engine.Options{Registry: reg, Queue: queue, Payloads: memory.NewPayloadStore(),
		Store: enginetest.CountingStore{Store: store, Counts: counts}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const alice = "aad:o'neil/#?x"
	start := func(graph, id, owner, input string) {
		t.Helper()
		meta := fmt.Sprintf(`{"owner":%q}`, owner)
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: graph, InstanceID: id, Input: []byte(input), Metadata: []byte(meta)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct creation times at the index's precision
	}
	for i := range 30 {
		start("data_pipeline", fmt.Sprintf("other-%02d", i), fmt.Sprintf("bob%d", i%3), `{"source_url":"u"}`)
		if i%10 == 0 {
			start("support_agent", fmt.Sprintf("mine-w%02d", i), alice, `{"user_message":"refund"}`)
			start("data_pipeline", fmt.Sprintf("mine-d%02d", i), alice, `{"source_url":"u"}`)
		}
	}
	driveQueue(t, e, queue)
	list := func(q engine.RunQuery) ([]string, string) {
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
		return ids, page.ContinuationToken
	}
	if got, tok := list(engine.RunQuery{Owner: alice, Limit: 3}); !slices.Equal(got, []string{"mine-d20", "mine-w20", "mine-d10"}) || tok == "" {
		t.Errorf("newest 3 of alice's: %v, token %q", got, tok)
	} else if got, tok := list(engine.RunQuery{Owner: alice, Limit: 3, ContinuationToken: tok}); !slices.Equal(got, []string{"mine-w10", "mine-d00", "mine-w00"}) || tok != "" {
		t.Errorf("the next 3 of alice's: %v, token %q; want the last page, without a token", got, tok)
	}
	if got, tok := list(engine.RunQuery{Owner: alice, Status: engine.StatusRunning}); !slices.Equal(got, []string{"mine-w20", "mine-w10", "mine-w00"}) || tok != "" {
		t.Errorf("alice's running runs: %v, token %q", got, tok)
	}
	if got, tok := list(engine.RunQuery{Owner: "eve", Limit: 1}); len(got) != 0 || tok != "" {
		t.Errorf("eve, who has no runs: %v, token %q", got, tok)
	}
	if err := e.CancelRun(ctx, "mine-w00", "done"); err != nil {
		t.Fatal(err)
	}
	driveQueue(t, e, queue)
	if err := e.PurgeRun(ctx, "mine-d00"); err != nil {
		t.Fatal(err)
	}
	if got, _ := list(engine.RunQuery{Owner: alice, Unfinished: true}); !slices.Equal(got, []string{"mine-w20", "mine-w10"}) {
		t.Errorf("alice's unfinished runs after the cancel: %v", got)
	}
	if got, _ := list(engine.RunQuery{Owner: alice}); len(got) != 5 || slices.Contains(got, "mine-d00") {
		t.Errorf("alice's runs after the purge: %v", got)
	}
	// Another instance over the same table reads the key the first one created.
	other, err := engine.New(engine.Options{Registry: reg, Queue: queue, Payloads: memory.NewPayloadStore(), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	k1, err1 := e.SharedKey(ctx, "token")
	k2, err2 := other.SharedKey(ctx, "token")
	if err1 != nil || err2 != nil || len(k1) != engine.SharedKeySize || !bytes.Equal(k1, k2) {
		t.Errorf("shared keys %x (%v), %x (%v); want one %d-byte key", k1, err1, k2, err2, engine.SharedKeySize)
	}
}
