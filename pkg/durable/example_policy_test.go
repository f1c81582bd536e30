package durable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

type Claim struct {
	Outcome string `json:"outcome"`
}

// A graph declares its own guards: here every wait without a timeout of its own gives up after
// 48 hours at "expire", and failing nodes get three attempts. The operator may still override
// a field per graph in the engine's options (engine.Options.Policies).
func ExampleWithPolicy() {
	b := durable.NewManifestBuilder[Claim]("claims", durable.WithPolicy(durable.GraphPolicy{
		WaitTimeout:     48 * time.Hour,
		WaitTimeoutNode: "expire",
		Retry:           durable.RetryPolicy{MaxAttempts: 3},
	}))
	b.SetEntrypoint("file")
	_ = b.AddStep("file", func(_ context.Context, c Claim) (Claim, error) { return c, nil },
		durable.WithDecide(func(context.Context, Claim) (durable.RouteDecision, error) {
			return durable.WaitForEvent("assessment", "settle"), nil
		}))
	_ = b.AddStep("settle", func(_ context.Context, c Claim) (Claim, error) { c.Outcome = "settled"; return c, nil }, durable.Terminal())
	_ = b.AddStep("expire", func(_ context.Context, c Claim) (Claim, error) { c.Outcome = "expired"; return c, nil }, durable.Terminal())
	_ = durable.OnEvent(b, "assessment", func(_ context.Context, c Claim, _ struct{}) (Claim, error) { return c, nil })
	g, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Policy().WaitTimeout, g.Policy().Retry.MaxAttempts)

	kit := durabletest.New(&testing.T{}, g, durabletest.Options{Logger: quietLog}) // in a test, pass its t
	kit.Start("claim-1", Claim{})
	kit.Advance(49 * time.Hour)
	fmt.Println(kit.Final("claim-1").Outcome)
	// Output:
	// 48h0m0s 3
	// expired
}
