// Command slowapp is a test app for the Functions-path tests: durable graphs whose node hangs,
// for functionTimeout and poison work items. It is built by the tests, not by ./...
package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durablehost"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// State: the node hangs for HangMS when Marker names a file that does not exist yet (it
// creates it first, so a redelivery does not hang again), or always when Marker is "".
type State struct {
	HangMS int    `json:"hang_ms"`
	Marker string `json:"marker"`
	Done   bool   `json:"done"`
}

func work(ctx context.Context, s State) (any, error) {
	hang := s.Marker == ""
	if !hang {
		path := filepath.Join(os.Getenv("SLOWAPP_DIR"), filepath.Base(s.Marker))
		if _, err := os.Stat(path); os.IsNotExist(err) {
			hang = os.WriteFile(path, nil, 0o644) == nil
		}
	}
	if hang {
		select {
		case <-time.After(time.Duration(s.HangMS) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return durable.Update{"done": true}, nil
}

func build(_ context.Context, s launch.Settings) (*launch.App, error) {
	h, err := host.New(host.Options{Logger: s.Logger, AuthLevel: funchost.AuthFunction})
	if err != nil {
		return nil, err
	}
	b := durable.NewManifestBuilder[State]("slow")
	b.SetEntrypoint("work")
	if err := b.AddNode("work", work, durable.Terminal()); err != nil {
		return nil, err
	}
	g, err := b.Build()
	if err != nil {
		return nil, err
	}
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		return nil, err
	}
	eng, err := engine.New(s.Durable.EngineOptions(engine.Options{Registry: reg, Logger: s.Logger}))
	if err != nil {
		return nil, err
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: s.Logger})
	if err != nil {
		return nil, err
	}
	if err := durablehost.Mount(svc, h, durablehost.MountOptions{}); err != nil {
		return nil, err
	}
	if err := durablehost.RegisterWorker(h.FunctionApp(), durablehost.WorkerOptions{Worker: eng, QueueName: s.Durable.QueueName, Logger: s.Logger}); err != nil {
		return nil, err
	}
	a := &launch.App{FunctionApp: h.FunctionApp(), Close: eng.Close}
	if s.Durable.EmbeddedDispatcher {
		a.Start = eng.Start
	}
	return a, nil
}

func main() { launch.Main(build) }
