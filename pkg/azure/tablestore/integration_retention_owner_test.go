//go:build integration

package tablestore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// familyState is the state of the family graph: whether its child has completed.
type familyState struct {
	Spawned bool `json:"spawned"`
}

// familyGraphs builds family, which starts one child run of family_kid and completes once
// the child has, and family_kid, which completes at once.
func familyGraphs() ([]durable.Graph, error) {
	b := durable.NewManifestBuilder[familyState]("family")
	b.SetEntrypoint("spawn")
	if err := errors.Join(
		b.AddStep("spawn", func(_ context.Context, s familyState) (familyState, error) { return s, nil },
			durable.WithDecide(func(context.Context, familyState) (durable.RouteDecision, error) {
				return durable.StartChild("family_kid", nil, "spawned"), nil
			})),
		b.AddStep("spawned", func(_ context.Context, s familyState) (familyState, error) {
			s.Spawned = true
			return s, nil
		}, durable.Terminal()),
	); err != nil {
		return nil, err
	}
	parent, err := b.Build()
	if err != nil {
		return nil, err
	}
	k := durable.NewManifestBuilder[familyState]("family_kid")
	k.SetEntrypoint("play")
	if err := k.AddStep("play", func(_ context.Context, s familyState) (familyState, error) { return s, nil }, durable.Terminal()); err != nil {
		return nil, err
	}
	kid, err := k.Build()
	if err != nil {
		return nil, err
	}
	return []durable.Graph{parent, kid}, nil
}

// TestIntegrationRetention_MaxAge_OneOwnersFamiliesNeverPurgeAnothers: on Azure Table
// storage retention goes by each run's own age (the table service's timestamps; the store
// accounts no bytes to owners, so there is no count per owner to crowd): alice's many aged
// families — parents and their children — are purged, and bob's younger family is kept, his
// child filed under bob in the run index as its root's owner's run, listed by his parent.
func TestIntegrationRetention_MaxAge_OneOwnersFamiliesNeverPurgeAnothers(t *testing.T) {
	t.Parallel()
	const maxAge, aliceRuns = 2 * time.Second, 4
	queue := memory.NewQueue()
	e, err := engine.New(engine.Options{Registry: runsapitest.Registry(t, familyGraphs), Store: tablestore.New(newTable(t)),
		Queue: queue, Payloads: memory.NewPayloadStore(), Retention: engine.Retention{MaxAge: maxAge}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	start := func(owner, id string) {
		t.Helper()
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "family", InstanceID: id, Input: []byte(`{}`),
			Metadata: []byte(fmt.Sprintf(`{%q:%q}`, engine.MetadataOwnerKey, owner))}); err != nil {
			t.Fatal(err)
		}
	}
	family := func(id string) []string {
		t.Helper()
		run, err := e.GetRun(ctx, id)
		if err != nil || run.RuntimeStatus != engine.StatusCompleted || len(run.ChildInstanceIDs) != 1 {
			t.Fatalf("%s: %v %s, children %v; want completed with one child", id, err, run.RuntimeStatus, run.ChildInstanceIDs)
		}
		return []string{id, run.ChildInstanceIDs[0]}
	}
	for i := range aliceRuns {
		start("alice", fmt.Sprint("alice-", i))
	}
	driveQueue(t, e, queue)
	var alices []string
	for i := range aliceRuns {
		alices = append(alices, family(fmt.Sprint("alice-", i))...)
	}
	time.Sleep(maxAge + time.Second)
	start("bob", "bob-root")
	driveQueue(t, e, queue)
	bobs := family("bob-root")
	if _, err := e.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range alices {
		if _, err := e.GetRun(ctx, id); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("alice's %s: %v, want purged", id, err)
		}
	}
	if got := family("bob-root"); !slices.Equal(got, bobs) {
		t.Fatalf("bob's family after the sweep: %v, want %v", got, bobs)
	}
	kid, err := e.GetRun(ctx, bobs[1])
	if err != nil || kid.ParentInstanceID != "bob-root" {
		t.Fatalf("bob's child %s: %v, parent %q", bobs[1], err, kid.ParentInstanceID)
	}
	page, err := e.ListRuns(ctx, engine.RunQuery{Owner: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, r := range page.Runs {
		listed = append(listed, r.InstanceID)
	}
	slices.Sort(listed)
	if want := slices.Sorted(slices.Values(bobs)); !slices.Equal(listed, want) {
		t.Fatalf("bob's runs listed: %v, want his root and its child %v", listed, want)
	}
}
