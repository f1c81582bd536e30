// Command funcgraph is the example funcgraph app. Under the Azure Functions host (when
// FUNCTIONS_CUSTOMHANDLER_PORT is set) it runs as a custom handler; otherwise it takes a
// subcommand:
//
//	funcgraph serve [--addr 127.0.0.1:7071]   serve the routes directly, with key checks
//	funcgraph stage [--target local|publish]  write the folder func start / func publish runs
//	funcgraph functions [--out functions]     write the function.json folders
//	funcgraph hostjson [--out host.json]      write the built-in host.json naming this binary
//	funcgraph --version                       print funcgraph's version, Go's and this build's
//
// Everything but the choice of app lives in pkg/launch; see its documentation for settings
// (FUNCGRAPH_TRACE_EXPORTER=stdout prints OpenTelemetry spans on stderr: make run TRACE=stdout),
// and pkg/exampleapp/assistantmodel for the assistant's model settings (docs/configuration.md).
package main

import (
	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/exampleapp/assistantmodel"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

func main() { launch.Main(exampleapp.LaunchWith(assistantmodel.FromEnv)) }
