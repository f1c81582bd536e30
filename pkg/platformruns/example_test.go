package platformruns_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// Background runs on the durable engine: Register the internal graph before building the
// engine (with its Policy), then Bind the backend to the engine. In an app, Bind's result is
// platform.Options.NewRunBackend and the platform Service is the executor; here a stand-in
// executor runs one run.
func ExampleRegister() {
	reg := durable.NewRegistry()
	backend, err := platformruns.Register(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Policies: map[string]engine.GraphPolicy{platformruns.GraphName: platformruns.Policy},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	_ = eng.Start(ctx)
	defer eng.Close()

	runs, err := backend.Bind(eng)(execFunc(func(context.Context, platform.Run) (platform.RunStatus, error) {
		return platform.RunSuccess, nil // the platform Service runs the assistant's graph here
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	run := platform.Run{RunID: "run-1", ThreadID: "thread-1", Status: platform.RunPending,
		Request: platform.RunRequest{AssistantID: "echo_agent", StreamMode: "values", MultitaskStrategy: "enqueue"}}
	if err := runs.Submit(ctx, run); err != nil {
		fmt.Println(err)
		return
	}
	done, err := runs.Join(ctx, "thread-1", "run-1")
	fmt.Println(done.Status, err)
	// Output: success <nil>
}
