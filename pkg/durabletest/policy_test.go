package durabletest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

type helpdesk struct {
	Outcome string `json:"outcome"`
	Tries   int    `json:"tries"`
}

// helpdeskGraph waits for "reply" with no timeout of its own, so the graph's policy bounds the
// wait; "open" fails its first `failures` attempts.
func helpdeskGraph(t testing.TB, p durable.GraphPolicy, failures int) durable.GraphRegistration[helpdesk] {
	t.Helper()
	b := durable.NewManifestBuilder[helpdesk]("helpdesk", durable.WithPolicy(p))
	b.SetEntrypoint("open")
	tries := 0
	_ = b.AddStep("open", func(_ context.Context, s helpdesk) (helpdesk, error) {
		if tries++; tries <= failures {
			return s, errors.New("flaky")
		}
		s.Tries = tries
		return s, nil
	}, durable.WithDecide(func(context.Context, helpdesk) (durable.RouteDecision, error) {
		return durable.WaitForEvent("reply", "close"), nil
	}))
	_ = b.AddStep("close", func(_ context.Context, s helpdesk) (helpdesk, error) { s.Outcome = "closed"; return s, nil }, durable.Terminal())
	_ = b.AddStep("expire", func(_ context.Context, s helpdesk) (helpdesk, error) { s.Outcome = "expired"; return s, nil }, durable.Terminal())
	_ = durable.OnEvent(b, "reply", func(_ context.Context, s helpdesk, _ struct{}) (helpdesk, error) { return s, nil })
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestKit_GraphPolicy_TheGraphsOwnApplies(t *testing.T) {
	t.Parallel()
	own := durable.GraphPolicy{WaitTimeout: time.Hour, WaitTimeoutNode: "expire", Retry: durable.RetryPolicy{MaxAttempts: 3}}
	g := helpdeskGraph(t, own, 2)
	if g.Policy() != own {
		t.Fatalf("Policy() = %+v, want %+v", g.Policy(), own)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	kit.Start("t1", helpdesk{})
	kit.Advance(time.Hour + 10*time.Second) // two back-offs of 1 s and 2 s, then the hour's wait
	if got := kit.Final("t1"); got.Outcome != "expired" || got.Tries != 3 {
		t.Fatalf("final = %+v, want expired after 3 tries", got)
	}
}

func TestKit_GraphPolicy_TheOperatorsFieldsWin(t *testing.T) {
	t.Parallel()
	g := helpdeskGraph(t, durable.GraphPolicy{WaitTimeout: time.Hour, WaitTimeoutNode: "expire"}, 0)
	// The operator's WaitTimeout wins; its empty WaitTimeoutNode leaves the graph's.
	kit := durabletest.New(t, g, durabletest.Options{Policy: durable.GraphPolicy{WaitTimeout: 3 * time.Hour}})
	kit.Start("t1", helpdesk{})
	kit.Advance(2 * time.Hour)
	if run := kit.Run("t1"); run.RuntimeStatus != durabletest.StatusRunning {
		t.Fatalf("after 2 h: %s, want still waiting (the operator's 3 h)", run.RuntimeStatus)
	}
	kit.Advance(time.Hour + time.Second)
	if got := kit.Final("t1"); got.Outcome != "expired" {
		t.Fatalf("final = %+v, want expired at the graph's timeout node", got)
	}
}

func TestBuild_GraphPolicy_Checked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		p    durable.GraphPolicy
		want string
	}{
		{durable.GraphPolicy{MaxSteps: -1}, "policy of graph 'p' has a negative value"},
		{durable.GraphPolicy{Retry: durable.RetryPolicy{InitialBackoff: -time.Second}}, "policy of graph 'p' has a negative value"},
		{durable.GraphPolicy{WaitTimeoutNode: "nope"}, "policy of graph 'p' references unknown wait_timeout_node 'nope'"},
	} {
		b := durable.NewManifestBuilder[helpdesk]("p", durable.WithPolicy(tt.p))
		b.SetEntrypoint("a")
		_ = b.AddStep("a", func(_ context.Context, s helpdesk) (helpdesk, error) { return s, nil }, durable.Terminal())
		if _, err := b.Build(); err == nil || err.Error() != tt.want || !errors.Is(err, durable.ErrInvalidGraph) {
			t.Errorf("Build(%+v) = %v, want %q", tt.p, err, tt.want)
		}
	}
}

func TestBuild_GraphPolicy_NotInTheHash(t *testing.T) {
	t.Parallel()
	a := helpdeskGraph(t, durable.GraphPolicy{}, 0)
	b := helpdeskGraph(t, durable.GraphPolicy{MaxSteps: 5, WaitTimeout: time.Minute, WaitTimeoutNode: "expire"}, 0)
	if a.Manifest().GraphHash != b.Manifest().GraphHash {
		t.Fatalf("hashes %s and %s: the policy entered the hash", a.Manifest().GraphHash, b.Manifest().GraphHash)
	}
}
