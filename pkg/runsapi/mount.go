package runsapi

import (
	"errors"
	"fmt"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/inspector"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// healthDetailsKey is the member of GET /api/health/details that lists the durable graphs
// when the runs API is mounted on a hosting app.
const healthDetailsKey = "durable_graphs"

// ErrMount is wrapped by Mount when the two surfaces cannot share one app.
var ErrMount = errors.New("durable: cannot mount on the hosting app")

// MountOptions configures Mount.
type MountOptions struct {
	// InProcess names durable graphs that the hosting app also serves in-process (invoke and
	// stream, see InProcessGraph), next to their durable runs.
	InProcess []string
	// InProcessMaxSteps bounds the node visits of in-process runs; 0 means
	// DefaultInProcessMaxSteps.
	InProcessMaxSteps int
}

// Mount puts the runs API svc on the hosting app's function app, so that one app serves both
// kinds of graph:
//
//   - the run routes (start, status, event, cancel, list, history, feed, purge) are added to h's
//     function app; health and openapi.json are not: GET /api/health keeps the hosting body
//     {"status":"ok"}, the durable graphs' fragments appear in GET /api/health/details under
//     "durable_graphs", and the hosting app's openapi.json lists the run routes and their
//     schemas;
//   - graph names form one namespace: every durable graph name, internal ones included, is
//     claimed on h (names taken by hosted graphs fail), and a duplicate route fails;
//   - internal graphs (durable.Registry.RegisterInternal) appear in neither health details nor
//     openapi.json, and the run routes answer 404 for them and their runs;
//   - every graph h offers as async runs (AsyncRuns, or AsyncMode on the graph) is registered
//     in svc's registry as a one-node durable graph (NewAsyncGraph), so that
//     POST /api/graphs/{name}/runs starts it and the run routes serve it. The engine must use
//     the same registry;
//   - the durable graphs named in opts.InProcess are also registered on h as InProcessGraphs;
//   - the run inspector page (package inspector, GET /api/inspector) is added next to the run
//     routes, at their auth level;
//   - without an explicit Options.AuthLevel the run routes take h's app-level auth level
//     (function by default), so mounting never opens them silently; without an explicit
//     Options.MaxWait the feed waits at most h's MaxWait.
//
// Call Mount once, at startup, after registering the hosted graphs and the durable graphs.
func Mount(svc *Service, h *host.GraphHostApp, opts MountOptions) error {
	reg := svc.reg
	durableNames := make([]string, 0)
	for _, g := range reg.List() {
		durableNames = append(durableNames, g.Manifest().GraphName)
	}
	for _, name := range opts.InProcess {
		if !slices.Contains(durableNames, name) {
			return fmt.Errorf("%w: in-process graph %q is not a registered durable graph", ErrMount, name)
		}
		if reg.Internal(name) {
			return fmt.Errorf("%w: in-process graph %q is an internal graph", ErrMount, name)
		}
	}
	if err := mountAsync(reg, h, durableNames); err != nil {
		return err
	}
	for _, name := range durableNames {
		g, err := reg.Latest(name)
		if err != nil {
			return fmt.Errorf("mount graph %s: %w", name, err)
		}
		if slices.Contains(opts.InProcess, name) {
			err = h.Register(NewInProcessGraph(g, opts.InProcessMaxSteps), name, host.RegisterOptions{
				Description: "Durable graph " + name + ", run in-process to completion or to its first wait",
			})
		} else {
			err = h.ReserveGraphName(name)
		}
		if err != nil {
			return fmt.Errorf("%w: graph %s: %w", ErrMount, name, err)
		}
	}
	if mw := h.Options().MaxWait; svc.opts.MaxWait == 0 && mw > 0 {
		svc.maxWait = mw // FUNCGRAPH_MAX_WAIT in a funcgraph binary
	}
	app := h.FunctionApp()
	runFns := svc.runFunctions(svc.authLevel(h.AuthLevel()))
	for _, fn := range append(runFns, inspector.Function(runFns[0].AuthLevel)) {
		if err := app.HandleHTTP(fn); err != nil {
			return fmt.Errorf("%w: %w", ErrMount, err)
		}
	}
	if err := h.AddHealthDetails(healthDetailsKey, func() any { return fragments(svc.reg) }); err != nil {
		return fmt.Errorf("%w: %w", ErrMount, err)
	}
	h.AddOpenAPI(func(doc *openapi.Document) {
		for _, m := range svc.openAPISchemas() {
			doc.AddSchema(m.Key, m.Value)
		}
	})
	return nil
}

// mountAsync registers h's async graphs in reg, the runs API's registry.
func mountAsync(reg *durable.Registry, h *host.GraphHostApp, durableNames []string) error {
	names := h.AsyncGraphs()
	if len(names) == 0 {
		return nil
	}
	for _, name := range names {
		if slices.Contains(durableNames, name) {
			return fmt.Errorf("%w: graph %s is both hosted and durable", ErrMount, name)
		}
		hosted, ok := h.Graph(name)
		if !ok {
			return fmt.Errorf("%w: hosted graph %s not found", ErrMount, name)
		}
		g, err := NewAsyncGraph(name, hosted)
		if err != nil {
			return fmt.Errorf("%w: graph %s: %w", ErrMount, name, err)
		}
		if err := reg.Register(g); err != nil {
			return fmt.Errorf("%w: graph %s: %w", ErrMount, name, err)
		}
	}
	return nil
}
