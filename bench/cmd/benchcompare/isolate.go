package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/funcgraph/funcgraph/bench"
)

// onceIsolated measures one batch of engine in a child process: this command, run with
// -child, which starts the engine, warms it up, measures, prints the result and exits.
func onceIsolated(ctx context.Context, c config, engine string, runs, concurrency int) (bench.Result, error) {
	self, err := os.Executable()
	if err != nil {
		return bench.Result{}, fmt.Errorf("isolate: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, "-child", engine, "-runs", strconv.Itoa(runs),
		"-concurrency", strconv.Itoa(concurrency), "-warmup", strconv.Itoa(c.warmup), "-poll", c.interval.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return bench.Result{}, fmt.Errorf("measure %s in a child process: %w: %s", engine, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var res bench.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return bench.Result{}, fmt.Errorf("measure %s in a child process: read its result: %w", engine, err)
	}
	if res.Engine != engine || res.Runs != runs || res.Elapsed <= 0 {
		return bench.Result{}, fmt.Errorf("measure %s in a child process: unexpected result %+v", engine, res)
	}
	return res, nil
}

// runChild is the -child mode: one batch of engine, its result printed as JSON on stdout.
// It returns the process's exit code.
func runChild(engine string, runs, concurrency, warmup int, interval time.Duration) int {
	if runs < 1 || (engine != "funcgraph" && engine != "durabletask") {
		fmt.Fprintf(os.Stderr, "benchcompare: -child %q -runs %d: want funcgraph or durabletask and runs ≥ 1\n", engine, runs)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := onceLabelled(ctx, config{interval: interval, warmup: warmup}, runs, concurrency, engine == "funcgraph")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		return 1
	}
	return 0
}
