// Command usermod is a user's app in its own module: one hosted graph and one durable graph,
// handed to launch.Main. Nothing else: `usermod stage` writes the folders the host runs.
package main

import (
	"context"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// Note is the hosted graph's input and output.
type Note struct {
	Text string `json:"text"`
}

func shout(_ context.Context, n Note) (Note, error) { return Note{Text: n.Text + "!"}, nil }

// Order is the durable graph's state.
type Order struct {
	Shipped bool `json:"shipped"`
}

func ship(_ context.Context, o Order) (Order, error) {
	o.Shipped = true
	return o, nil
}

func build(_ context.Context, s launch.Settings) (*launch.App, error) {
	h, err := host.New(host.Options{Logger: s.Logger, LockBackendSetting: s.LockBackend, ThreadLock: s.ThreadLock})
	if err != nil {
		return nil, err
	}
	if err := h.Register(host.Func[Note, Note](shout), "shout", host.RegisterOptions{}); err != nil {
		return nil, err
	}
	b := durable.NewManifestBuilder[Order]("orders")
	b.SetEntrypoint("ship")
	_ = b.AddStep("ship", ship, durable.Terminal())
	g, err := b.Build()
	if err != nil {
		return nil, err
	}
	return launch.HostApp(s, h, launch.DurableOptions{}, g)
}

func main() { launch.Main(build) }
