package platform_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform"
)

// executor stands in for the platform Service, which is the RunExecutor in an app.
type executor func(ctx context.Context, run platform.Run) (platform.RunStatus, error)

func (f executor) ExecuteRun(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
	return f(ctx, run)
}

// The in-process background-run backend, with 8 workers instead of 4. In an app it is built
// by the service: platform.Options{NewRunBackend: func(exec platform.RunExecutor)
// (platform.RunBackend, error) { return platform.NewLocalRuns(exec, opts), nil }}.
func ExampleNewLocalRuns() {
	exec := executor(func(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
		return platform.RunSuccess, nil // run the assistant's graph on the thread
	})
	runs := platform.NewLocalRuns(exec, platform.LocalRunsOptions{Workers: 8})
	defer runs.Close()

	ctx := context.Background()
	run := platform.Run{RunID: "run-1", ThreadID: "thread-1", Status: platform.RunPending,
		Request: platform.RunRequest{AssistantID: "echo_agent"}}
	if err := runs.Submit(ctx, run); err != nil {
		fmt.Println(err)
		return
	}
	done, err := runs.Join(ctx, "thread-1", "run-1")
	fmt.Println(done.Status, err)
	// Output: success <nil>
}

// A run waiting for a thread that another run holds starts as soon as that run releases the
// thread: the platform routes call Wake then (RetryGap is the fallback).
func ExampleLocalRuns_Wake() {
	var held atomic.Bool
	held.Store(true)
	exec := executor(func(ctx context.Context, run platform.Run) (platform.RunStatus, error) {
		if held.Load() {
			return "", platform.ErrRetryLater // a blocking run holds the thread
		}
		return platform.RunSuccess, nil
	})
	runs := platform.NewLocalRuns(exec, platform.LocalRunsOptions{RetryGap: time.Hour})
	defer runs.Close()

	ctx := context.Background()
	run := platform.Run{RunID: "run-1", ThreadID: "thread-1", Status: platform.RunPending,
		Request: platform.RunRequest{AssistantID: "echo_agent"}}
	if err := runs.Submit(ctx, run); err != nil {
		fmt.Println(err)
		return
	}
	for { // until the run waits for its thread
		if r, _ := runs.Get(ctx, "thread-1", "run-1"); r.Status == platform.RunPending && r.UpdatedAt != (time.Time{}) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	held.Store(false) // the blocking run releases the thread
	runs.Wake("thread-1")
	done, err := runs.Join(ctx, "thread-1", "run-1")
	fmt.Println(done.Status, err)
	// Output: success <nil>
}

// A run's stream is kept in chunks, here LocalRuns' (the platform Service writes them as the run
// executes, and GET .../runs/{run_id}/stream reads them); a chunk not stored yet is
// ErrChunkNotFound.
func ExampleLocalRuns_RunStream() {
	runs := platform.NewLocalRuns(executor(func(context.Context, platform.Run) (platform.RunStatus, error) {
		return platform.RunSuccess, nil
	}), platform.LocalRunsOptions{MaxStreamBytes: 1 << 20})
	defer runs.Close()

	ctx := context.Background()
	if err := runs.Submit(ctx, platform.Run{RunID: "run-1", ThreadID: "thread-1"}); err != nil {
		fmt.Println(err)
		return
	}
	stream, err := runs.RunStream(ctx, "thread-1", "run-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = stream.PutChunk(ctx, 0, []byte("id: 1\nevent: metadata\ndata: {\"run_id\": \"run-1\"}\n\n"))
	chunk, err := stream.Chunk(ctx, 0)
	fmt.Printf("%q %v\n", chunk, err)
	_, err = stream.Chunk(ctx, 1)
	fmt.Println(errors.Is(err, platform.ErrChunkNotFound))
	// Output:
	// "id: 1\nevent: metadata\ndata: {\"run_id\": \"run-1\"}\n\n" <nil>
	// true
}
