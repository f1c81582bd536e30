package enginetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// approvalState is the state of ApprovalGraph.
type approvalState struct {
	Approved bool   `json:"approved"`
	Result   string `json:"result"`
}

// ApprovalGraph builds version version of the graph "approvals" for redeploy tests: "ask"
// waits for the event "go" (unless the input is already approved), whose handler sets
// approved; "done" (terminal) sets result to "v<version>". Each version has its own handler
// name for "done", so its own graph hash.
func ApprovalGraph(t testing.TB, version string) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[approvalState]("approvals", durable.WithVersion(version))
	b.SetEntrypoint("ask")
	ask := func(context.Context, approvalState) (any, error) { return nil, nil }
	wait := func(_ context.Context, s approvalState) (any, error) {
		if s.Approved {
			return "done", nil
		}
		return durable.WaitForEvent("go", "done"), nil
	}
	done := func(context.Context, approvalState) (any, error) { return durable.Update{"result": "v" + version}, nil }
	errs := []error{
		b.AddNode("ask", ask, durable.WithHandlerName("approvals.ask"), durable.WithRoute(wait), durable.WithRouteName("approvals.wait")),
		b.AddNode("done", done, durable.WithHandlerName("approvals.done."+version), durable.Terminal()),
		b.AddEventHandler("go", func(context.Context, approvalState, json.RawMessage) (any, error) {
			return durable.Update{"approved": true}, nil
		}),
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
