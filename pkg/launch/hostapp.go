package launch

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// DurableOptions tune HostApp. The zero value is ready to use.
type DurableOptions struct {
	// Engine configures the engine; its storage, registry and (when nil) logger are filled in
	// from the settings.
	Engine engine.EngineOptions
	// API configures the runs HTTP API; Runs and Registry are filled in. Its AuthLevel
	// defaults to the hosting app's.
	API runsapi.Options
	// Mount configures how the API mounts on the hosting app.
	Mount runsapi.MountOptions
}

// HostApp returns the App that serves the hosting app h and the durable graphs: it runs them
// on an engine over the settings' storage (Azure when AzureWebJobsStorage is configured,
// memory otherwise), mounts the runs API on h, registers the worker functions that deliver
// work items under the Functions host, and starts the engine's own dispatcher only where
// Settings.Durable says so. Register h's hosted graphs first. With no durable graph it only
// serves h.
func HostApp(s Settings, h *host.GraphHostApp, opts DurableOptions, graphs ...durable.Graph) (*App, error) {
	if len(graphs) == 0 {
		return &App{FunctionApp: h.FunctionApp()}, nil
	}
	reg := durable.NewRegistry()
	for _, g := range graphs {
		if err := reg.Register(g); err != nil {
			return nil, fmt.Errorf("launch: %w", err)
		}
	}
	st := s.Durable
	if st.Store == nil { // Settings not read by FromEnv (a test): in-memory twins
		names, _ := NamesFor("")
		st = Durable{Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), QueueName: names.WorkQueue, EmbeddedDispatcher: true}
	}
	eo := st.EngineOptions(opts.Engine)
	eo.Registry = reg
	if eo.Logger == nil {
		eo.Logger = s.Logger
	}
	eng, err := engine.NewEngine(eo)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	api := opts.API
	api.Runs, api.Registry = eng, reg
	if api.Logger == nil {
		api.Logger = s.Logger
	}
	svc, err := runsapi.NewService(api)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if err := svc.Mount(h, opts.Mount); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	err = runsapi.RegisterWorker(h.FunctionApp(), runsapi.WorkerOptions{Worker: eng, QueueName: st.QueueName, Logger: s.Logger})
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	a := &App{FunctionApp: h.FunctionApp(), Close: eng.Close}
	if st.EmbeddedDispatcher {
		a.Start = eng.Start
	}
	return a, nil
}
