package exampleapp

import (
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

// mountMCP adds the MCP endpoint (package mcpserver, POST /api/mcp, function auth) over the
// assembled durable graphs, which the assembly's engine runs, one tool per public graph, and
// over the hosted graphs (echo_agent), run in process through their invoke routes.
func mountMCP(app *funchost.FunctionApp, asm *launch.Assembly, iso *isolation.Isolation, logger *slog.Logger) error {
	srv, err := mcpserver.New(mcpserver.Options{Runs: asm.Engine, Registry: asm.Registry, Hosted: asm.Host, Isolation: iso, Logger: logger})
	if err != nil {
		return err
	}
	return app.HandleHTTP(srv.Function(funchost.AuthFunction))
}
