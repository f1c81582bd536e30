package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Invoice is the state of the "billing" graph, which orders start as child runs.
type Invoice struct {
	Items int `json:"items"`
	Total int `json:"total"`
}

// Order is the state of the "orders" graph.
type Order struct {
	Items    int      `json:"items"`
	Invoice  *Invoice `json:"invoice"`
	Shipped  bool     `json:"shipped"`
	BilledBy string   `json:"billed_by"`
}

// billingGraph prices an invoice: 5 per item.
func billingGraph() durable.GraphRegistration[Invoice] {
	b := durable.NewManifestBuilder[Invoice]("billing")
	b.SetEntrypoint("price")
	_ = b.AddStep("price", func(_ context.Context, in Invoice) (Invoice, error) {
		in.Total = 5 * in.Items
		return in, nil
	}, durable.WithHandlerName("billing.price"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// ordersGraph bills an order in a child run of "billing", then ships it.
func ordersGraph() durable.GraphRegistration[Order] {
	b := durable.NewManifestBuilder[Order]("orders")
	b.SetEntrypoint("bill")
	_ = b.AddNode("bill", func(context.Context, Order) (any, error) { return nil, nil }, durable.WithHandlerName("orders.bill"),
		durable.WithRoute(func(_ context.Context, o Order) (any, error) {
			// The child's final state lands in the "invoice" field; the run goes on at "ship".
			return durable.StartChild("billing", Invoice{Items: o.Items}, "ship").Into("invoice"), nil
		}), durable.WithRouteName("orders.bill.route"))
	_ = b.AddStep("ship", func(ctx context.Context, o Order) (Order, error) {
		info, _ := durable.StepInfoFrom(ctx) // the child run whose completion led here
		o.Shipped, o.BilledBy = true, info.ChildRunID
		return o, nil
	}, durable.WithHandlerName("orders.ship"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// A route starts a child run of another registered graph with durable.StartChild: the run
// waits, the child runs as a run of its own (status, history, cancel), and once it has
// completed the run goes on at the resume node with the child's final state in the Into
// field. The child's id derives from the parent's step, so a step that runs again never
// starts a second child; a child that fails or is cancelled fails its parent.
func ExampleStartChild() {
	reg := durable.NewRegistry()
	_ = reg.Register(ordersGraph())
	_ = reg.Register(billingGraph()) // a child's graph must be registered too
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "orders", InstanceID: "o1", Input: json.RawMessage(`{"items":3}`)})
	run, _ := e.WaitRun(ctx, "o1", nil)
	o, _ := engine.DecodeState[Order](run)
	child, _ := e.GetRun(ctx, run.ChildInstanceIDs[0])
	fmt.Println(run.RuntimeStatus, "total", o.Invoice.Total, "shipped", o.Shipped)
	fmt.Println("child", child.GraphName, child.RuntimeStatus, "of", child.ParentInstanceID, o.BilledBy == child.InstanceID)
	// Output:
	// Completed total 15 shipped true
	// child billing Completed of o1 true
}

// TestExampleStartChild_Kit runs the example's graphs on the test kit: the parent's history
// records the child it started and the one that resumed it.
func TestExampleStartChild_Kit(t *testing.T) {
	kit := durabletest.New(t, ordersGraph(), durabletest.Options{Graphs: []durable.Graph{billingGraph()},
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	kit.Start("o1", Order{Items: 4})
	if got := kit.Final("o1"); got.Invoice == nil || got.Invoice.Total != 20 || !got.Shipped {
		t.Fatalf("final %+v", got)
	}
	var kinds []string
	for _, ev := range kit.History("o1") {
		kinds = append(kinds, ev.Type+":"+ev.Node)
	}
	want := "run_started:bill node_completed:bill route_resolved:bill child_started:bill child_finished:bill child_completed:ship " +
		"node_completed:ship route_resolved:ship run_completed:ship"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("history %v\nwant %s", kinds, want)
	}
}
