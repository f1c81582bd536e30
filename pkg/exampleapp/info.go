package exampleapp

import (
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/a2aserver"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/version"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// infoFunction is GET /api/info: which protocols the app serves and where, for a client (or
// an agent) that discovers before it calls. Paths are under the app's route prefix.
const infoFunction = "fg_info"

// appInfo is the body of GET /api/info.
type appInfo struct {
	Name      string         `json:"name"`
	Version   string         `json:"version"`
	Protocols []protocolInfo `json:"protocols"`
}

// protocolInfo is one protocol the app serves.
type protocolInfo struct {
	// Name: runs, langgraph, mcp or a2a.
	Name string `json:"name"`
	// Version is the protocol's version or revision served ("" when it has none).
	Version string `json:"version,omitempty"`
	// Path is where it is served; {graph_name} stands for a durable graph's name.
	Path string `json:"path"`
	// Discovery is the document that describes it (an OpenAPI document, an agent card).
	Discovery string `json:"discovery,omitempty"`
	// Extensions are the protocol's extensions served.
	Extensions []string `json:"extensions,omitempty"`
	// Docs names the page of the documentation.
	Docs string `json:"docs"`
}

// mcpRevision is the MCP revision the endpoint negotiates (package mcpserver).
const mcpRevision = "2026-07-28"

// registerInfo adds GET /api/info (function auth) to app.
func registerInfo(app *funchost.FunctionApp) error {
	prefix := "/" + app.RoutePrefix()
	if prefix == "/" {
		prefix = ""
	}
	body, err := pyjson.Marshal(appInfo{Name: "funcgraph", Version: version.Version, Protocols: []protocolInfo{
		{Name: "runs", Path: prefix + "/runs", Discovery: prefix + "/openapi.json", Docs: "docs/http-runs.md"},
		{Name: "langgraph", Path: prefix + "/threads", Discovery: prefix + "/openapi.json", Docs: "docs/platform-compat.md"},
		{Name: "mcp", Version: mcpRevision, Path: prefix + "/mcp", Extensions: []string{mcpserver.ExtensionTasks}, Docs: "docs/mcp.md"},
		{Name: "a2a", Version: a2aserver.ProtocolVersion, Path: prefix + "/a2a/{graph_name}",
			Discovery: prefix + "/a2a/{graph_name}/.well-known/agent-card.json", Docs: "docs/a2a.md"},
	}})
	if err != nil {
		return err
	}
	return app.HandleHTTP(funchost.HTTPFunction{
		Name: infoFunction, Methods: []string{http.MethodGet}, Route: "info", AuthLevel: funchost.AuthFunction,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}),
		Doc: funchost.RouteDoc{Summary: "The protocols this app serves, and where", Tags: []string{"app"}},
	})
}
