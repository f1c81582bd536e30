// Package myapp is the README's "Your own app" listing, compiled and tested: the README shows
// this file below its package clause as the main package of a user's cmd/myapp (a test checks
// they are the same). It is a package here, not a command: nothing under pkg/ is a main
// package.
package myapp

import (
	"context"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// A hosted graph is a plain function: JSON in, JSON out.
type Question struct {
	Text string `json:"text"`
}

type Answer struct {
	Reply string `json:"reply"`
}

func ask(_ context.Context, q Question) (Answer, error) {
	if q.Text == "" {
		return Answer{}, &host.ClientError{Status: http.StatusBadRequest, Message: "text is required"}
	}
	return Answer{Reply: "you asked: " + q.Text}, nil
}

// A durable graph's state; each step returns the new state.
type Greeting struct {
	Name     string `json:"name"`
	Reply    string `json:"reply"`
	Approved bool   `json:"approved"`
}

type Approval struct {
	Approved bool `json:"approved"`
}

func greet(_ context.Context, s Greeting) (Greeting, error) {
	s.Reply = "hello " + s.Name
	return s, nil
}

func awaitApproval(_ context.Context, s Greeting) (durable.RouteDecision, error) {
	if !s.Approved {
		return durable.WaitForEvent("approval", "send"), nil
	}
	return durable.Next("send"), nil
}

func approve(_ context.Context, s Greeting, a Approval) (Greeting, error) {
	s.Approved = a.Approved
	return s, nil
}

func send(_ context.Context, s Greeting) (Greeting, error) {
	s.Reply += " (approved)"
	return s, nil
}

func greeter() (durable.GraphRegistration[Greeting], error) {
	b := durable.NewManifestBuilder[Greeting]("greeter")
	b.SetEntrypoint("greet")
	_ = b.AddStep("greet", greet, durable.WithDecide(awaitApproval))
	_ = b.AddStep("send", send, durable.Terminal())
	_ = durable.OnEvent(b, "approval", approve)
	return b.Build() // reports the first AddStep or OnEvent error
}

func build(_ context.Context, s launch.Settings) (*launch.App, error) {
	g, err := greeter()
	if err != nil {
		return nil, err
	}
	// Every store comes from the settings: Azure Storage when AzureWebJobsStorage is set,
	// memory otherwise. The run routes take the app's function auth.
	a, err := launch.Assemble(s, launch.Spec{
		Hosted:  []launch.Hosted{{Name: "ask", Graph: host.Func[Question, Answer](ask)}},
		Durable: []durable.Graph{g},
	})
	if err != nil {
		return nil, err
	}
	return a.App(), nil
}

func main() { launch.Main(build) }
