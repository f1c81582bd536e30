package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// legacify turns run id into one started by the release before the index was sharded: its
// index rows move to the unsharded partitions without Hash and Version, and its head loses
// IndexShards.
func legacify(t *testing.T, r *rig, id string) {
	t.Helper()
	ctx := t.Context()
	head, err := r.store.Get(ctx, id, "r")
	if err != nil {
		t.Fatal(err)
	}
	delete(head.Properties, "IndexShards")
	if _, err := r.store.Submit(ctx, []engine.Op{{Kind: engine.OpReplace, IfMatch: head.ETag, Entity: head}}); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for s := range 8 {
		for _, family := range []string{"~runs", "~graph", "~active"} {
			q := engine.Query{Where: []engine.Cond{{Property: "RunID", Op: engine.CondEq, Value: id}}}
			q.PartitionKey = fmt.Sprintf("%s-%d", family, s)
			for _, pk := range []string{q.PartitionKey, q.PartitionKey + "~" + str(head.Properties["Graph"])} {
				q.PartitionKey = pk
				page, err := r.store.Query(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, ent := range page.Entities {
					legacyPK := strings.Replace(pk, fmt.Sprintf("-%d", s), "", 1)
					if _, err := r.store.Submit(ctx, []engine.Op{{Kind: engine.OpDelete, IfMatch: "*", Entity: ent}}); err != nil {
						t.Fatal(err)
					}
					delete(ent.Properties, "Hash")
					delete(ent.Properties, "Version")
					ent.PartitionKey = legacyPK
					if _, err := r.store.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: ent}}); err != nil {
						t.Fatal(err)
					}
					moved++
				}
			}
		}
	}
	if moved < 2 {
		t.Fatalf("moved %d index rows of %s", moved, id)
	}
}

func str(v any) string { s, _ := v.(string); return s }

// TestEngine_ListRuns_LegacyUnshardedRows_ListedAndUpdated: runs indexed by the release
// before sharding (rows in "~runs", "~graph~<g>", "~active", "~active~<g>", no hash) list
// among the sharded ones newest first, match every filter (the hash through their head),
// get their status recorded there when they finish, and leave with a purge.
func TestEngine_ListRuns_LegacyUnshardedRows_ListedAndUpdated(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{Clock: tickingClock()}, false)
	var all []string
	for i := range 12 {
		id := fmt.Sprintf("w%02d", i)
		r.start(t, "support_agent", id, `{"user_message":"refund"}`)
		all = append(all, id)
	}
	r.drive(t)
	legacy := []string{"w00", "w03", "w04", "w09"}
	for _, id := range legacy {
		legacify(t, r, id)
	}
	page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: "~active~support_agent"})
	if err != nil || len(page.Entities) != len(legacy) {
		t.Fatalf("legacy active partition: %d rows (%v), want %d", len(page.Entities), err, len(legacy))
	}
	slices.Reverse(all)
	hash := r.reg.Versions("support_agent")[0].Manifest().GraphHash
	for _, q := range []engine.RunQuery{{}, {GraphName: "support_agent"}, {Status: engine.StatusRunning}, {GraphHash: hash}, {GraphName: "support_agent", GraphHash: hash, Status: engine.StatusRunning}} {
		for _, limit := range []int{1, 5, 100} {
			if got := pageAll(t, r, q, limit); !slices.Equal(got, all) {
				t.Errorf("%+v, limit %d:\n got %v\nwant %v", q, limit, got, all)
			}
		}
	}
	if got := pageAll(t, r, engine.RunQuery{GraphHash: "0123456789abcdef"}, 100); len(got) != 0 {
		t.Errorf("another hash lists %v", got)
	}
	// A legacy run finishes: its status is recorded in the legacy partitions.
	for _, id := range []string{"w03", "w05"} {
		if err := r.e.RaiseEvent(t.Context(), id, "approval", []byte(`{"approved":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	r.drive(t)
	if err := r.e.CancelRun(t.Context(), "w04", "stop"); err != nil {
		t.Fatal(err)
	}
	if got := pageAll(t, r, engine.RunQuery{Status: engine.StatusCompleted}, 1); !slices.Equal(got, []string{"w05", "w03"}) {
		t.Errorf("completed: %v, want [w05 w03]", got)
	}
	if got := pageAll(t, r, engine.RunQuery{Status: engine.StatusTerminated, GraphName: "support_agent"}, 1); !slices.Equal(got, []string{"w04"}) {
		t.Errorf("terminated: %v, want [w04]", got)
	}
	for _, pk := range []string{"~runs", "~graph~support_agent"} {
		ent, err := r.store.Get(t.Context(), pk, rowKeyOf(t, r, pk, "w03"))
		if err != nil || ent.Properties["Status"] != "Completed" {
			t.Errorf("legacy row of w03 in %s: %v %v, want status Completed", pk, ent.Properties["Status"], err)
		}
	}
	page, err = r.store.Query(t.Context(), engine.Query{PartitionKey: "~active"})
	if err != nil || len(page.Entities) != 2 {
		t.Fatalf("legacy active partition: %d rows (%v), want the 2 unfinished legacy runs", len(page.Entities), err)
	}
	if err := r.e.PurgeRun(t.Context(), "w03"); err != nil {
		t.Fatal(err)
	}
	if rowKeyOf(t, r, "~runs", "w03") != "" || rowKeyOf(t, r, "~graph~support_agent", "w03") != "" {
		t.Error("purge left legacy index rows")
	}
	// Replacing a finished legacy run removes its legacy rows; the new run is sharded.
	r.start(t, "data_pipeline", "w04", `{"source_url":"u"}`)
	if rowKeyOf(t, r, "~runs", "w04") != "" {
		t.Error("replacement left the legacy row of the old run")
	}
	if got := pageAll(t, r, engine.RunQuery{GraphName: "data_pipeline"}, 3); !slices.Equal(got, []string{"w04"}) {
		t.Errorf("replacement: %v", got)
	}
}

// rowKeyOf returns the row key of run id's row in index partition pk, or "".
func rowKeyOf(t *testing.T, r *rig, pk, id string) string {
	t.Helper()
	page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: pk, Where: []engine.Cond{{Property: "RunID", Op: engine.CondEq, Value: id}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entities) == 0 {
		return ""
	}
	return page.Entities[0].RowKey
}
