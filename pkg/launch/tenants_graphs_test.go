package launch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// spillState is the state of the spill_fan graph: one branch per size, each adding a note
// of that many bytes.
type spillState struct {
	Sizes []int    `json:"sizes" durable:"required"`
	Notes []string `json:"notes"`
}

// spillFan builds spill_fan: plan fans out note once per size (durable.Map), and the
// branches join at done. A branch result past a table property is spilled to the payload
// store, so large sizes make the branches' results the payload store must take.
func spillFan(t *testing.T) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[spillState]("spill_fan")
	b.SetEntrypoint("plan")
	must(t, b.AddStep("plan", func(_ context.Context, s spillState) (spillState, error) { return s, nil },
		durable.WithDecide(func(_ context.Context, s spillState) (durable.RouteDecision, error) {
			return durable.Map("done", "note", s.Sizes), nil
		})))
	must(t, b.AddStep("note", func(ctx context.Context, s spillState) (spillState, error) {
		n, err := durable.BranchItem[int](ctx)
		if err != nil {
			return s, durable.NonRetryable(err)
		}
		s.Notes = append(s.Notes, strings.Repeat("n", n))
		return s, nil
	}, durable.WithNext("done")))
	must(t, b.Reduce("notes", durable.Append))
	must(t, b.AddStep("done", func(_ context.Context, s spillState) (spillState, error) { return s, nil }, durable.Terminal()))
	g, err := b.Build()
	must(t, err)
	return g
}

// familyState is the state of the family graph: whether its child has finished.
type familyState struct {
	Spawned bool `json:"spawned"`
}

// family builds two graphs: family starts one child run of family_kid and completes once the
// child has completed; family_kid completes at once.
func family(t *testing.T) []durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[familyState]("family")
	b.SetEntrypoint("spawn")
	must(t, b.AddStep("spawn", func(_ context.Context, s familyState) (familyState, error) { return s, nil },
		durable.WithDecide(func(_ context.Context, s familyState) (durable.RouteDecision, error) {
			return durable.StartChild("family_kid", nil, "spawned"), nil
		})))
	must(t, b.AddStep("spawned", func(_ context.Context, s familyState) (familyState, error) {
		s.Spawned = true
		return s, nil
	}, durable.Terminal()))
	parent, err := b.Build()
	must(t, err)
	k := durable.NewManifestBuilder[familyState]("family_kid")
	k.SetEntrypoint("play")
	must(t, k.AddStep("play", func(_ context.Context, s familyState) (familyState, error) { return s, nil }, durable.Terminal()))
	kid, err := k.Build()
	must(t, err)
	return []durable.Graph{parent, kid}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
