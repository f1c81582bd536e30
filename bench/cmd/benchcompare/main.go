// Command benchcompare runs the 3-step chain on durabletask-go v0.6.0 and on funcgraph's
// engine at equal concurrency and prints runs/s, steps/s and the ratio.
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
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, *concurrency, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, concurrency int, interval time.Duration) error {
	dt, err := bench.NewDurableTask(ctx, concurrency, interval)
	if err != nil {
		return err
	}
	defer dt.Close(context.Background())
	if _, err := dt.Run(ctx, 20); err != nil { // warm-up
		return err
	}
	for _, n := range []int{200, 1000} {
		r, err := dt.Run(ctx, n)
		if err != nil {
			return err
		}
		fmt.Println(r)
	}
	return nil
}
