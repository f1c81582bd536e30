// Command benchcompare runs the 3-step chain on durabletask-go v0.6.0 and on funcgraph's
// engine at equal concurrency and prints runs/s, steps/s and the ratio funcgraph /
// durabletask-go: 200 and 1 000 runs at concurrency 8 (the headline of docs/benchmarks.md), and 200 runs at
// each concurrency of -sweep (its chart). Every figure is the median of -rounds
// rounds, the two engines interleaved (durabletask-go, funcgraph, durabletask-go, …), each
// measured on a fresh engine of its own in a fresh process of its own (-isolate, the default:
// the command runs itself once per measurement), so neither engine pays for what the other
// left behind — durabletask-go's SQLite backend is never closed by its worker's Shutdown, and
// a funcgraph batch measured in the same process after it ran 10–30 % slower. -json writes the
// figures for `make bench-plots`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/bench"
)

func main() {
	concurrency := flag.Int("concurrency", 8, "worker concurrency of both engines for the 200- and 1 000-run figures")
	sweep := flag.String("sweep", "1,2,4,8,16", "concurrencies of the 200-run sweep (empty: none)")
	rounds := flag.Int("rounds", 3, "interleaved rounds per figure; the median is reported")
	interval := flag.Duration("poll", bench.DefaultPollInterval, "fixed status poll interval")
	warmup := flag.Int("warmup", 50, "runs per engine before measuring")
	out := flag.String("json", "", "write the figures as JSON to this file")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file; samples carry the label engine=funcgraph|durabletask (go tool pprof -tagfocus engine=funcgraph); measures in this one process (no -isolate)")
	isolate := flag.Bool("isolate", true, "measure each batch in a fresh process of its own (this command, run with -child)")
	child := flag.String("child", "", "internal: measure one batch of this engine (funcgraph|durabletask) with -runs runs and print it as JSON")
	childRuns := flag.Int("runs", 0, "internal: the runs of a -child batch")
	flag.Parse()
	if *child != "" {
		os.Exit(runChild(*child, *childRuns, *concurrency, *warmup, *interval))
	}
	if *cpuprofile != "" {
		stop, err := startProfile(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchcompare:", err)
			os.Exit(1)
		}
		defer stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cs, err := parseInts(*sweep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare: -sweep:", err)
		os.Exit(2)
	}
	rep, err := run(ctx, config{concurrency: *concurrency, sweep: cs, rounds: max(1, *rounds), interval: *interval, warmup: *warmup,
		isolate: *isolate && *cpuprofile == ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
	if *out != "" {
		data, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "benchcompare:", err)
			os.Exit(1)
		}
	}
}

// startProfile starts the CPU profile written to path; the returned func stops it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

type config struct {
	concurrency int
	sweep       []int
	rounds      int
	interval    time.Duration
	warmup      int
	isolate     bool // each batch in a process of its own
}

// Point is one figure: both engines' median runs/s over the rounds.
type Point struct {
	Runs        int     `json:"runs"`
	Concurrency int     `json:"concurrency"`
	Funcgraph   float64 `json:"funcgraph_runs_per_s"`
	DurableTask float64 `json:"durabletask_runs_per_s"`
	Ratio       float64 `json:"ratio"` // median of the rounds' ratios
	Rounds      int     `json:"rounds"`
}

// Report is what -json writes.
type Report struct {
	When     string  `json:"when"`
	Headline []Point `json:"headline"`
	Sweep    []Point `json:"sweep"`
}

func run(ctx context.Context, c config) (Report, error) {
	rep := Report{When: time.Now().UTC().Format(time.RFC3339)}
	where := "all batches in this process"
	if c.isolate {
		where = "each batch in a fresh process"
	}
	fmt.Printf("3-step chain (per visit: execute node + resolve route), poll every %s, warm-up %d runs, median of %d interleaved rounds, %s\n",
		c.interval, c.warmup, c.rounds, where)
	for _, n := range []int{200, 1000} {
		p, err := measure(ctx, c, n, c.concurrency)
		if err != nil {
			return rep, err
		}
		rep.Headline = append(rep.Headline, p)
	}
	for _, conc := range c.sweep {
		p, err := measure(ctx, c, 200, conc)
		if err != nil {
			return rep, err
		}
		rep.Sweep = append(rep.Sweep, p)
	}
	return rep, nil
}

// measure runs the interleaved rounds of one figure.
func measure(ctx context.Context, c config, runs, concurrency int) (Point, error) {
	var fg, dt, ratio []float64
	for range c.rounds {
		d, err := once(ctx, c, runs, concurrency, false)
		if err != nil {
			return Point{}, err
		}
		f, err := once(ctx, c, runs, concurrency, true)
		if err != nil {
			return Point{}, err
		}
		fmt.Println(d)
		fmt.Println(f)
		dt, fg = append(dt, d.RunsPerSecond()), append(fg, f.RunsPerSecond())
		ratio = append(ratio, f.RunsPerSecond()/d.RunsPerSecond())
	}
	p := Point{Runs: runs, Concurrency: concurrency, Funcgraph: bench.Median(fg), DurableTask: bench.Median(dt), Ratio: bench.Median(ratio), Rounds: c.rounds}
	fmt.Printf("median       runs=%-5d concurrency=%-3d funcgraph %.0f runs/s, durabletask %.1f runs/s: funcgraph/durabletask = %.1fx (target >= 100x)\n",
		runs, concurrency, p.Funcgraph, p.DurableTask, p.Ratio)
	return p, nil
}

// once measures one batch on a fresh engine, closed afterwards. Its CPU samples, and those of
// the goroutines the engine starts, carry the label engine=funcgraph or engine=durabletask.
func once(ctx context.Context, c config, runs, concurrency int, funcgraph bool) (res bench.Result, err error) {
	name := "durabletask"
	if funcgraph {
		name = "funcgraph"
	}
	if c.isolate {
		return onceIsolated(ctx, c, name, runs, concurrency)
	}
	pprof.Do(ctx, pprof.Labels("engine", name), func(ctx context.Context) {
		res, err = onceLabelled(ctx, c, runs, concurrency, funcgraph)
	})
	return res, err
}

func onceLabelled(ctx context.Context, c config, runs, concurrency int, funcgraph bool) (bench.Result, error) {
	type engine interface {
		Run(ctx context.Context, runs int) (bench.Result, error)
	}
	var e engine
	var closeFn func()
	if funcgraph {
		fg, err := bench.NewFuncgraph(ctx, concurrency, c.interval)
		if err != nil {
			return bench.Result{}, err
		}
		e, closeFn = fg, func() { _ = fg.Close() }
	} else {
		dt, err := bench.NewDurableTask(ctx, concurrency, c.interval)
		if err != nil {
			return bench.Result{}, err
		}
		e, closeFn = dt, func() { _ = dt.Close(context.Background()) }
	}
	defer closeFn()
	if _, err := e.Run(ctx, c.warmup); err != nil {
		return bench.Result{}, err
	}
	// As testing.B does before each benchmark: the garbage of the rounds before (the other
	// engine's included) is collected before the clock starts, not on this engine's time.
	runtime.GC()
	return e.Run(ctx, runs)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}
