// Command myapp is the README's "Your own app" example, kept compiling (a test checks the
// README shows this file).
package main

import (
	"context"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

type Greeting struct {
	Name  string `json:"name"`
	Reply string `json:"reply"`
}

func greet(_ context.Context, s Greeting) (any, error) {
	return durable.Update{"reply": "hello " + s.Name}, nil
}

func build(_ context.Context, s launch.Settings) (*launch.App, error) {
	h, err := host.New(host.Options{Logger: s.Logger, LockBackendSetting: s.LockBackend, ThreadLock: s.ThreadLock})
	if err != nil {
		return nil, err
	}
	if err := h.Register(host.InvokeFunc(echo), "echo", host.RegisterOptions{}); err != nil {
		return nil, err
	}
	b := durable.NewManifestBuilder[Greeting]("greeter")
	b.SetEntrypoint("greet")
	if err := b.AddNode("greet", greet, durable.Terminal()); err != nil {
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
	eng, err := memory.NewEngine(reg, engine.EngineOptions{})
	if err != nil {
		return nil, err
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg})
	if err != nil {
		return nil, err
	}
	if err := svc.Mount(h, runsapi.MountOptions{}); err != nil {
		return nil, err
	}
	return &launch.App{FunctionApp: h.FunctionApp(), Start: eng.Start, Close: eng.Close}, nil
}

func echo(_ context.Context, req host.Request) (any, error) { return req.Input, nil }

func main() { launch.Main(build) }
