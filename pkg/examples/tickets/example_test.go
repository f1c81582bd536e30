package tickets_test

import (
	"fmt"
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/examples/tickets"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// The trigger on an app's engine: under the Functions host each message on "tickets" starts
// a content_classifier run, its instance id "ticket-<message id>".
func ExampleRegister() {
	reg := durable.NewRegistry()
	g, _ := examples.ContentClassifier()
	_ = reg.Register(g)
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Logger: slog.New(slog.DiscardHandler)})
	defer eng.Close()

	app := funchost.NewFunctionApp()
	err := tickets.Register(app, tickets.Options{Runs: eng, QueueName: "tickets"})
	fmt.Println(err)
	for _, fn := range app.QueueFunctions() {
		fmt.Println(fn.Name, "on", fn.QueueName)
	}
	fmt.Println(tickets.InstanceID("5b1e4c1a-9f0e-4f3b-8d3c-2a1f0e9d8c7b"))
	// Output:
	// <nil>
	// tickets_triage on tickets
	// ticket-5b1e4c1a-9f0e-4f3b-8d3c-2a1f0e9d8c7b
}
