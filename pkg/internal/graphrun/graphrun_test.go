package graphrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

type doc struct {
	Items []string `json:"items"`
	Count int      `json:"count"`
}

func built(t *testing.T) durable.GraphRegistration[doc] {
	t.Helper()
	b := durable.NewManifestBuilder[doc]("docs")
	b.SetEntrypoint("a")
	_ = b.AddStep("a", func(_ context.Context, d doc) (doc, error) { return d, nil }, durable.Terminal())
	_ = b.Reduce("items", durable.Append)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// customGraph is a durable.Graph of its own, with no capabilities.
type customGraph struct{ durable.Graph }

func TestOf_RegistrationHasItsCapabilities(t *testing.T) {
	t.Parallel()
	c := graphrun.Of(built(t))
	if _, ok := c.(graphrun.Joiner); !ok {
		t.Error("a GraphRegistration is no Joiner")
	}
	if _, ok := c.(graphrun.StateChecker); !ok {
		t.Error("a GraphRegistration is no StateChecker")
	}
	if _, ok := c.(graphrun.EventChecker); !ok {
		t.Error("a GraphRegistration is no EventChecker")
	}
	if _, ok := c.(graphrun.ChildOutputSetter); !ok {
		t.Error("a GraphRegistration is no ChildOutputSetter")
	}
	if _, ok := c.(graphrun.NodePolicies[durable.NodePolicy]); !ok {
		t.Error("a GraphRegistration has no NodePolicies")
	}
	if _, ok := c.(graphrun.EventPayloadTyper[durable.EventPayload]); !ok {
		t.Error("a GraphRegistration is no EventPayloadTyper")
	}
	if err := graphrun.Of(durable.GraphRegistration[doc]{}).(graphrun.StateChecker).CheckState(json.RawMessage(`{}`)); err == nil {
		t.Error("the zero GraphRegistration checked a state")
	}
	custom := customGraph{}
	if got := graphrun.Of(custom); got != any(custom) {
		t.Errorf("Of(custom graph) = %T, want the graph itself", got)
	}
}

func TestJoin_ReducersOfTheGraphAndTheDefault(t *testing.T) {
	t.Parallel()
	base := json.RawMessage(`{"items":["a"],"count":0}`)
	results := []graphrun.BranchResult{{Index: 1, Update: json.RawMessage(`{"items":["a","c"]}`)}, {Index: 0, Update: json.RawMessage(`{"items":["a","b"]}`)}}
	got, err := graphrun.Of(built(t)).(graphrun.Joiner).Join(t.Context(), base, results)
	if err != nil || string(got) != `{"items":["a","b","c"],"count":0}` {
		t.Fatalf("Join = %s, %v", got, err)
	}
	var conflict *durable.BranchConflictError
	if _, err := graphrun.JoinBranches(base, results); !errors.As(err, &conflict) || conflict.Field != "items" {
		t.Fatalf("JoinBranches without reducers = %v, want a conflict on items", err)
	}
	if u, err := graphrun.StateUpdate(base, json.RawMessage(`{"items":["a"],"count":2}`)); err != nil || string(u) != `{"count":2}` {
		t.Fatalf("StateUpdate = %s, %v", u, err)
	}
}

func TestRecoverHandler_PanicIsAHandlerError(t *testing.T) {
	t.Parallel()
	call := func() (err error) {
		defer graphrun.RecoverHandler("node", "n", &err)
		panic("boom")
	}
	var herr *durable.HandlerError
	if err := call(); !errors.As(err, &herr) || herr.Name != "n" || err.Error() != "node handler panicked: boom" {
		t.Fatalf("err = %v", err)
	}
}

func TestContext_StepBranchAndEmitter(t *testing.T) {
	t.Parallel()
	ctx := graphrun.WithStepInfo(t.Context(), durable.StepInfo{RunID: "r", Step: 3})
	ctx = graphrun.WithBranch(ctx, durable.BranchInfo{Index: 1, Count: 2, Node: "n"})
	ctx, em := graphrun.WithEmitter(ctx)
	if info, ok := durable.StepInfoFrom(ctx); !ok || info.RunID != "r" || info.Step != 3 {
		t.Fatalf("StepInfoFrom = %+v, %v", info, ok)
	}
	if b, ok := durable.BranchFrom(ctx); !ok || b.Index != 1 {
		t.Fatalf("BranchFrom = %+v, %v", b, ok)
	}
	if err := durable.Emit(ctx, "progress", 1); err != nil {
		t.Fatal(err)
	}
	if evs := em.Events(); len(evs) != 1 || evs[0].Name != "progress" || string(evs[0].Data) != "1" {
		t.Fatalf("Events = %+v", evs)
	}
}
