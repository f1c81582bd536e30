// Command funcgraph is the example funcgraph app. Under the Azure Functions host (when
// FUNCTIONS_CUSTOMHANDLER_PORT is set) it runs as a custom handler; otherwise it takes a
// subcommand:
//
//	funcgraph serve [--addr 127.0.0.1:7071]   serve the routes directly, with key checks
//	funcgraph functions [--out functions]     write the function.json folders
//	funcgraph hostjson --out dist/host.json   write host.json naming this binary
//
// Everything but the choice of app lives in pkg/launch; see its documentation for settings
// (FUNCGRAPH_TRACE_EXPORTER=stdout prints OpenTelemetry spans on stderr: make run TRACE=stdout).
package main

import (
	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

func main() { launch.Main(exampleapp.Launch) }
