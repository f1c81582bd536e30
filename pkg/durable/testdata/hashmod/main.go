// Command hashmod is a user's module with one durable graph whose handlers are named by
// default: methods of its agent, in package main. It prints the graph's hash; its test prints
// the same line under `go test`, where package main is compiled under its import path.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// Plan is the graph's state.
type Plan struct {
	Steps []string `json:"steps"`
	Done  bool     `json:"done"`
}

// Agent holds the graph's handlers.
type Agent struct{}

func (a *Agent) plan(_ context.Context, p Plan) (Plan, error) {
	p.Steps = append(p.Steps, "think")
	return p, nil
}

func (a *Agent) next(_ context.Context, p Plan) (durable.RouteDecision, error) {
	if len(p.Steps) < 3 {
		return durable.Next("plan"), nil
	}
	return durable.Next("finish"), nil
}

func (a *Agent) finish(_ context.Context, p Plan) (Plan, error) {
	p.Done = true
	return p, nil
}

func graph() (durable.GraphRegistration[Plan], error) {
	a := &Agent{}
	b := durable.NewManifestBuilder[Plan]("agent")
	b.SetEntrypoint("plan")
	_ = b.AddStep("plan", a.plan, durable.WithDecide(a.next))
	_ = b.AddStep("finish", a.finish, durable.Terminal())
	return b.Build()
}

// hashLine is what the binary and the test print.
func hashLine() string {
	g, err := graph()
	if err != nil {
		return "error " + err.Error()
	}
	m := g.Manifest()
	return "graph_hash=" + m.GraphHash
}

func main() {
	if _, err := fmt.Println(hashLine()); err != nil {
		os.Exit(1)
	}
}
