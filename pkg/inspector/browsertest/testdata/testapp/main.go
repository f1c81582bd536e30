// Command testapp is the app the inspector's browser test and screenshots run against
// (make inspector-test, make inspector-screenshots): the example app's durable graphs
// (examples.All) on the in-memory engine, served with `testapp serve --addr <addr>` as
// pkg/launch serves any app, plus triage, an agent-shaped graph that uses every mark the
// inspector draws: a fan-out whose branch retries, a child run, a wait for an event with a
// deadline, a durable sleep, and a failure on demand (a Failed run to rewind).
//
// It is a test fixture, not an example to copy (the example graphs live in pkg/examples): make
// inspector-setup builds it, ./... does not (testdata).
package main

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

func main() { launch.Main(build) }

func build(_ context.Context, s launch.Settings) (*launch.App, error) {
	graphs, err := examples.All()
	if err != nil {
		return nil, fmt.Errorf("build inspector test app: %w", err)
	}
	triage, err := Triage()
	if err != nil {
		return nil, fmt.Errorf("build inspector test app: %w", err)
	}
	asm, err := launch.Assemble(s, launch.Spec{
		Durable:        append(graphs, triage),
		DurableOptions: launch.DurableOptions{API: runsapi.Options{AuthLevel: funchost.AuthFunction}},
	})
	if err != nil {
		return nil, fmt.Errorf("build inspector test app: %w", err)
	}
	return asm.App(), nil
}
