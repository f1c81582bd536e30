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
	Engine engine.Options
	// API configures the runs HTTP API; Runs and Registry are filled in. Its AuthLevel
	// defaults to the hosting app's, and so does its ResponseBudget (one budget for every
	// route of the app).
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
	a := &Assembly{Host: h}
	if err := a.mount(s, Spec{Durable: graphs, DurableOptions: opts}); err != nil {
		return nil, err
	}
	return a.App(), nil
}

// OrMemory returns d, or fresh in-memory twins with the embedded dispatcher when d has no
// storage (Settings that FromEnv did not fill, as in tests).
func (d Durable) OrMemory() Durable {
	if d.Store != nil {
		return d
	}
	names, _ := namesFor("")
	return Durable{
		Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Live: memory.NewLiveStore(), LiveFlushInterval: memoryLiveFlush,
		QueueName: names.WorkQueue, EmbeddedDispatcher: true, VisibilityTimeout: d.VisibilityTimeout,
		Retention: memoryRetention(),
	}
}

// MountDurable runs the graphs of reg on an engine over st, mounts the runs API on h and
// registers the worker functions (fg_orchestrator, fg_repair) that deliver its work items
// under the Functions host. It reports the graph versions that have unfinished runs but are
// not in reg (a log line each, and "unregistered_versions" in GET /api/health/details), from a
// bounded read of the active run index. The caller starts the engine (Engine.Start) only when
// st.EmbeddedDispatcher, and closes it. HostApp is the short form.
func MountDurable(st Durable, h *host.GraphHostApp, reg *durable.Registry, opts DurableOptions) (*engine.Engine, error) {
	if st.Store == nil {
		return nil, fmt.Errorf("launch: MountDurable: no storage (use Durable.OrMemory)")
	}
	if st.QueueName == "" {
		names, _ := namesFor("")
		st.QueueName = names.WorkQueue
	}
	eo := st.EngineOptions(opts.Engine)
	eo.Registry = reg
	eng, err := engine.New(eo)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	api := opts.API
	api.Runs, api.Registry = eng, reg
	if api.ResponseBudget == nil {
		api.ResponseBudget = h.Options().ResponseBudget // one budget with the app's other routes
	}
	svc, err := runsapi.NewService(api)
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if err := runsapi.Mount(svc, h, opts.Mount); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	err = runsapi.RegisterWorker(h.FunctionApp(), runsapi.WorkerOptions{Worker: eng, QueueName: st.QueueName, Logger: eo.Logger})
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	// function.json reads the queue name from FUNCGRAPH_WORK_QUEUE; Run checks it names st.QueueName.
	if err := h.FunctionApp().BindQueueName(st.QueueName, envWorkQueue); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if err := reportVersions(eng, h, eng.Options().Logger); err != nil { // versionreport.go
		return nil, fmt.Errorf("launch: %w", err)
	}
	return eng, nil
}
