//go:build integration

package launch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// TestIntegrationDurable_Redeploy_OldRunsFinishOnTheirVersion is the redeploy scenario of
// issue #18 on Azure Storage (Azurite), each "process" a new engine on the same table, queue
// and container: runs of v1 wait for an event; restarted with v1 and v2, the old runs finish
// on v1 and new runs start on v2; restarted with v2 only, a v1 run that gets its event, and
// one started by an old process, stay unfinished with a status naming v1 — not failed —
// and finish once v1 is back; an event for a v1 run raised where v1 is gone is refused
// (nothing stored), so no event can fail a run unchecked. Along the way the sharded run index lists every run newest
// first across pages and counts the unfinished runs per version.
func TestIntegrationDurable_Redeploy_OldRunsFinishOnTheirVersion(t *testing.T) {
	s, err := launch.FromEnv(t.Context(), envOf(map[string]string{
		launch.EnvStorage:       azuritetest.ConnectionString(t),
		launch.EnvStoragePrefix: azuritetest.UniqueName("v"),
	}), launch.ModeServe, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Durable.Azure {
		t.Fatal("FromEnv did not pick the Azure backends")
	}
	v1, v2 := enginetest.ApprovalGraph(t, "1"), enginetest.ApprovalGraph(t, "2")
	h1 := v1.Manifest().GraphHash
	deploy := func(gs ...durable.Graph) *engine.Engine {
		t.Helper()
		reg := durable.NewRegistry()
		for _, g := range gs {
			if err := reg.Register(g); err != nil {
				t.Fatal(err)
			}
		}
		eng, err := engine.New(s.Durable.EngineOptions(engine.Options{Registry: reg, Logger: discard(), PollInterval: 50 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		return eng
	}
	start := func(eng *engine.Engine, id, input string) {
		t.Helper()
		if _, err := eng.StartRun(t.Context(), engine.StartRunRequest{GraphName: "approvals", InstanceID: id, Input: []byte(input)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(eng *engine.Engine, id string, done func(engine.Run) bool) engine.Run {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		run, err := eng.WaitRun(ctx, id, done)
		if err != nil {
			t.Fatalf("%s: %v (last %s %s)", id, err, run.RuntimeStatus, run.CustomStatus)
		}
		return run
	}
	waiting := func(r engine.Run) bool { _, ok := r.WaitingFor(); return ok }
	finishedOn := func(eng *engine.Engine, id, version string) {
		t.Helper()
		run := waitFor(eng, id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
		if run.RuntimeStatus != engine.StatusCompleted || run.GraphVersion != version {
			t.Fatalf("%s: %s on version %s (%s), want Completed on %s", id, run.RuntimeStatus, run.GraphVersion, run.Output, version)
		}
	}

	old := deploy(v1)
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("old-%d", i)
		start(old, id, `{}`)
		waitFor(old, id, waiting)
		ids = append(ids, id)
	}
	_ = old.Close()

	both := deploy(v2, durable.Previous(v1))
	for _, id := range ids[:2] {
		if err := both.RaiseEvent(t.Context(), id, "go", nil); err != nil {
			t.Fatal(err)
		}
		finishedOn(both, id, "1")
	}
	start(both, "new", `{"approved":true}`)
	finishedOn(both, "new", "2")
	var listed []string
	for q := (engine.RunQuery{GraphName: "approvals", Limit: 2}); ; {
		page, err := both.ListRuns(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			listed = append(listed, r.InstanceID)
		}
		if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
			break
		}
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	want = append([]string{"new"}, want...)
	if !slices.Equal(listed, want) {
		t.Fatalf("listed %v, want %v (newest first across shards)", listed, want)
	}
	counts, err := both.UnfinishedByVersion(t.Context(), "approvals")
	if err != nil || len(counts) != 1 || counts[0].GraphHash != h1 || counts[0].Unfinished != 4 {
		t.Fatalf("unfinished by version: %+v %v, want 4 on v1", counts, err)
	}
	_ = both.Close()

	start(old, "late", `{}`) // an old process still starts a v1 run (its engine is closed, not gone)
	onlyV2 := deploy(v2)
	// It reports v1 as in flight but not registered, from the active index alone.
	found, truncated, err := onlyV2.UnregisteredVersions(t.Context(), 0)
	if err != nil || truncated || len(found) != 1 || found[0].GraphHash != h1 || found[0].Unfinished != 5 {
		t.Fatalf("unregistered versions: %+v %v %v, want v1 with 5 unfinished runs", found, truncated, err)
	}
	// An instance without v1 cannot check an event for a v1 run: it stores nothing and says
	// to retry (503 over HTTP); one that still has v1 takes it.
	var unavailable *engine.VersionUnavailableError
	if err := onlyV2.RaiseEvent(t.Context(), ids[2], "go", nil); !errors.As(err, &unavailable) || unavailable.Hash != h1 {
		t.Fatalf("event on a v1 run where v1 is gone: %v, want a *engine.VersionUnavailableError", err)
	}
	if err := old.RaiseEvent(t.Context(), ids[2], "go", nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ids[2], "late"} {
		run := waitFor(onlyV2, id, func(r engine.Run) bool { _, ok := r.WaitingForVersion(); return ok })
		if hash, _ := run.WaitingForVersion(); hash != h1 || run.RuntimeStatus.Finished() {
			t.Fatalf("%s: %s, custom status %s; want unfinished, waiting for %s", id, run.RuntimeStatus, run.CustomStatus, h1)
		}
	}
	_ = onlyV2.Close()

	back := deploy(v2, durable.Previous(v1))
	defer back.Close()
	finishedOn(back, ids[2], "1")
	waitFor(back, "late", waiting)
	if err := back.RaiseEvent(t.Context(), "late", "go", nil); err != nil {
		t.Fatal(err)
	}
	finishedOn(back, "late", "1")
	for _, id := range ids[3:] {
		if run, _ := back.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusRunning {
			t.Fatalf("%s: %s, want still waiting for its event", id, run.RuntimeStatus)
		}
	}
}
