package exampleapp

import (
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

// mountMCP adds the MCP endpoint (package mcpserver, POST /api/mcp, function auth) over the
// example durable graphs, which eng runs: one tool per graph.
func mountMCP(app *funchost.FunctionApp, eng *engine.Engine, graphs []durable.Graph, iso *isolation.Isolation, logger *slog.Logger) error {
	reg := durable.NewRegistry()
	for _, g := range graphs {
		if err := reg.Register(g); err != nil {
			return err
		}
	}
	srv, err := mcpserver.New(mcpserver.Options{Runs: eng, Registry: reg, Isolation: iso, Logger: logger})
	if err != nil {
		return err
	}
	return app.HandleHTTP(srv.Function(funchost.AuthFunction))
}
