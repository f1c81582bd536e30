// Command slowapp is a test app for the Functions-path tests: durable graphs whose node hangs,
// for functionTimeout and poison work items. It is built by the tests, not by ./...
package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// State: the node hangs for HangMS when Marker names a file that does not exist yet (it
// creates it first, so a redelivery does not hang again), or always when Marker is "". A hang
// ends early once the file "release" exists in SLOWAPP_DIR: a test holds runs in their node
// for as long as it needs, however slowly a loaded machine starts them.
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
		release := filepath.Join(os.Getenv("SLOWAPP_DIR"), "release")
		until := time.After(time.Duration(s.HangMS) * time.Millisecond)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
	hanging:
		for {
			select {
			case <-until:
				break hanging
			case <-tick.C:
				if _, err := os.Stat(release); err == nil {
					break hanging
				}
			case <-ctx.Done():
				return nil, ctx.Err()
			}
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
	st := s.Durable.OrMemory()
	eng, err := launch.MountDurable(st, h, reg, launch.DurableOptions{})
	if err != nil {
		return nil, err
	}
	a := &launch.App{FunctionApp: h.FunctionApp(), Close: eng.Close}
	if st.EmbeddedDispatcher {
		a.Start = eng.Start
	}
	return a, nil
}

func main() { launch.Main(build) }
