package durable_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Case is the state of the search-key example.
type Case struct {
	TicketID string `json:"ticket_id"`
	Customer string `json:"customer"`
	Answer   string `json:"answer"`
}

// SearchKeys names the state fields whose start values find the graph's runs: a listing by
// ticket_id (engine.RunQuery.Keys, GET /api/runs?key.ticket_id=T-42) reads that value's runs
// only. The keys stay out of the graph hash.
func ExampleManifestBuilder_SearchKeys() {
	b := durable.NewManifestBuilder[Case]("cases")
	b.SetEntrypoint("answer")
	_ = b.SearchKeys("ticket_id", "customer")
	_ = b.AddStep("answer", func(_ context.Context, c Case) (Case, error) {
		c.Answer = "done"
		return c, nil
	}, durable.Terminal())
	g, _ := b.Build()

	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: quietLog})
	ctx := context.Background()
	for i, ticket := range []string{"T-42", "T-7", "T-42"} {
		_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "cases", InstanceID: fmt.Sprintf("case-%d", i),
			Input: json.RawMessage(fmt.Sprintf(`{"ticket_id":%q,"customer":"acme"}`, ticket))})
	}
	page, _ := e.ListRuns(ctx, engine.RunQuery{Keys: map[string]string{"ticket_id": "T-42"}})
	fmt.Println(len(page.Runs), g.Manifest().SearchKeys)
	// Output: 2 [ticket_id customer]
}
