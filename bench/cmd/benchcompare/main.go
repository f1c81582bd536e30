// Command benchcompare runs the 3-step chain on durabletask-go v0.6.0 and on funcgraph's
// engine at equal concurrency, for 200 and 1 000 runs, and prints runs/s, steps/s and the
// ratio funcgraph / durabletask-go.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/funcgraph/funcgraph/bench"
)

func main() {
	concurrency := flag.Int("concurrency", 8, "worker concurrency of both engines")
	interval := flag.Duration("poll", bench.DefaultPollInterval, "fixed status poll interval")
	warmup := flag.Int("warmup", 50, "runs per engine before measuring")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, *concurrency, *interval, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

// runner is one engine as benchcompare drives it.
type runner interface {
	Run(ctx context.Context, runs int) (bench.Result, error)
}

func run(ctx context.Context, concurrency int, interval time.Duration, warmup int) error {
	dt, err := bench.NewDurableTask(ctx, concurrency, interval)
	if err != nil {
		return err
	}
	defer dt.Close(context.Background())
	fg, err := bench.NewFuncgraph(ctx, concurrency, interval)
	if err != nil {
		return err
	}
	defer fg.Close()

	fmt.Printf("3-step chain (per visit: execute node + resolve route), concurrency %d, poll every %s, warm-up %d runs\n", concurrency, interval, warmup)
	for _, r := range []runner{dt, fg} {
		if _, err := r.Run(ctx, warmup); err != nil {
			return err
		}
	}
	for _, n := range []int{200, 1000} {
		d, err := dt.Run(ctx, n)
		if err != nil {
			return err
		}
		f, err := fg.Run(ctx, n)
		if err != nil {
			return err
		}
		fmt.Println(d)
		fmt.Println(f)
		fmt.Printf("ratio        runs=%-5d funcgraph/durabletask = %.1fx (target >= 30x)\n", n, f.RunsPerSecond()/d.RunsPerSecond())
	}
	return nil
}
