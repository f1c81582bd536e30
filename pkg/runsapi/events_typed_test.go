package runsapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

type expense struct {
	Amount   int    `json:"amount"`
	Approved bool   `json:"approved"`
	Reviewer string `json:"reviewer"`
}

type expenseVerdict struct {
	Approved bool   `json:"approved" durable:"required"`
	Reviewer string `json:"reviewer"`
}

func expenseApprovals(t *testing.T) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[expense]("expense_approval")
	b.SetEntrypoint("ask")
	keep := func(_ context.Context, s expense) (expense, error) { return s, nil }
	_ = b.AddStep("ask", keep, durable.WithDecide(func(context.Context, expense) (durable.RouteDecision, error) {
		return durable.WaitForEvent("approval", "done"), nil
	}))
	_ = b.AddStep("done", keep, durable.Terminal())
	_ = durable.OnEvent(b, "approval", func(_ context.Context, s expense, v expenseVerdict) (expense, error) {
		s.Approved, s.Reviewer = v.Approved, v.Reviewer
		return s, nil
	})
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestService_TypedEvent_CheckedAtTheDoor (issue #21): a typed payload is decoded at the
// request: a wrong type or a missing required field is a 400 naming the field, nothing
// stored; unknown keys of the payload and of the initial state are ignored.
func TestService_TypedEvent_CheckedAtTheDoor(t *testing.T) {
	reg := durable.NewRegistry()
	if err := reg.Register(expenseApprovals(t)); err != nil {
		t.Fatal(err)
	}
	_, trs := serveRuns(t, engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "expense")
			runsapitest.Start(t, tr, "expense_approval", id, `{"amount": 12, "currency": "EUR"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Waiting)
			for _, tt := range []struct{ name, body, want string }{
				{"wrong type", `{"approved": "yes"}`,
					`{"error": "invalid payload of event 'approval': field 'approved': expected bool, got JSON string", "details": [{"loc": ["approved"], "msg": "expected bool, got JSON string"}]}`},
				{"missing required field", `{"reviewer": "r"}`,
					`{"error": "invalid payload of event 'approval': field 'approved': field required", "details": [{"loc": ["approved"], "msg": "field required"}]}`},
			} {
				runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", tt.body).Expect(t, tt.name, 400, tt.want)
			}
			runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/aproval", `{"approved": true}`).Expect(t, "no handler", 404,
				`{"error": "graph 'expense_approval' has no handler for event 'aproval'"}`)
			if hist := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history", "").Body; strings.Contains(hist, "event_received") {
				t.Fatalf("a refused event was stored: %s", hist)
			}
			runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true, "reviewer": "r", "aproved": false}`).
				Expect(t, "unknown key", 202, "")
			res := runsapitest.Poll(t, tr, id, runsapitest.Finished)
			if !strings.Contains(res.Body, `"Completed"`) || !strings.Contains(res.Body, `"reviewer": "r"`) {
				t.Fatalf("approval not applied: %s", res.Body)
			}
		})
	}
}
