package durable_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// Refund is the state of the registry examples' graph.
type Refund struct {
	Amount   int  `json:"amount"`
	Approved bool `json:"approved"`
}

// refundGraph builds the given version of the "refunds" graph; 0.2.0 adds an approval step.
func refundGraph(version string) durable.Graph {
	b := durable.NewManifestBuilder[Refund]("refunds", durable.WithVersion(version))
	b.SetEntrypoint("pay")
	if version != "0.1.0" {
		b.SetEntrypoint("approve")
		_ = b.AddStep("approve", func(_ context.Context, r Refund) (Refund, error) { r.Approved = true; return r, nil },
			durable.WithHandlerName("refunds.approve"), durable.WithNext("pay"))
	}
	_ = b.AddStep("pay", func(_ context.Context, r Refund) (Refund, error) { return r, nil },
		durable.WithHandlerName("refunds.pay"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// A registry holds every deployed version of a graph: new runs start on the latest, while
// runs already in flight keep resolving the version they started on by its hash.
func ExampleNewRegistry() {
	reg := durable.NewRegistry()
	v1, v2 := refundGraph("0.1.0"), refundGraph("0.2.0")
	_ = reg.Register(v1)
	_ = reg.Register(v2)

	latest, _ := reg.Latest("refunds")
	fmt.Println(latest.Manifest().Version, latest.Manifest().Entrypoint)
	old, _ := reg.Lookup("refunds", v1.Manifest().GraphHash)
	fmt.Println(old.Manifest().Version, old.Manifest().Entrypoint)
	_, err := reg.Latest("payroll")
	fmt.Println(err, errors.Is(err, durable.ErrUnknownGraph))
	// Output:
	// 0.2.0 approve
	// 0.1.0 pay
	// unknown graph 'payroll' true
}

// Register refuses the same (name, hash) twice, so a graph registered by two packages is caught
// at startup.
func ExampleRegistry_Register() {
	reg := durable.NewRegistry()
	fmt.Println(reg.Register(refundGraph("0.1.0")))
	err := reg.Register(refundGraph("0.1.0"))
	fmt.Println(errors.Is(err, durable.ErrGraphExists), len(reg.List()))
	// Output:
	// <nil>
	// true 1
}

// RegisterInternal is for graphs funcgraph runs for itself: the engine resolves them like any
// other, but Public and Fragments (what health and openapi.json list) leave them out.
func ExampleRegistry_RegisterInternal() {
	reg := durable.NewRegistry()
	_ = reg.Register(refundGraph("0.1.0"))
	b := durable.NewManifestBuilder[Refund]("fg_housekeeping")
	b.SetEntrypoint("sweep")
	_ = b.AddStep("sweep", func(_ context.Context, r Refund) (Refund, error) { return r, nil }, durable.Terminal())
	internal, _ := b.Build()
	fmt.Println(reg.RegisterInternal(internal))
	_, err := reg.Latest("fg_housekeeping")
	fmt.Println(err, reg.Internal("fg_housekeeping"), len(reg.List()), len(reg.Public()), len(reg.Public()))
	// Output:
	// <nil>
	// <nil> true 2 1 1
}

// After a change to a graph, keep the old version registered with Previous until its runs
// have finished: new runs start on the new version whatever the order of the calls, and runs
// pinned to the old hash keep running on it.
func ExamplePrevious() {
	v1, v2 := refundGraph("0.1.0"), refundGraph("0.2.0")
	reg := durable.NewRegistry()
	_ = reg.Register(v2)
	_ = reg.Register(durable.Previous(v1))

	latest, _ := reg.Latest("refunds")
	fmt.Println("new runs:", latest.Manifest().Version)
	for _, g := range reg.Versions("refunds") {
		fmt.Println("registered:", g.Manifest().Version)
	}
	// Output:
	// new runs: 0.2.0
	// registered: 0.2.0
	// registered: 0.1.0
}
