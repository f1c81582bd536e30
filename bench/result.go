package bench

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// ChainSteps is the number of node visits of one chain run.
const ChainSteps = 3

// DefaultPollInterval is the fixed interval between status polls of a run that is not finished.
const DefaultPollInterval = time.Millisecond

// Result is one measured batch of chain runs.
type Result struct {
	// Engine names the engine measured.
	Engine string
	// Runs is the number of runs in the batch; Steps = Runs × ChainSteps.
	Runs, Steps int
	// Concurrency is the worker concurrency of the engine.
	Concurrency int
	// Elapsed runs from the first schedule call to the observed completion of the last run.
	Elapsed time.Duration
}

// RunsPerSecond is Runs divided by Elapsed.
func (r Result) RunsPerSecond() float64 { return float64(r.Runs) / r.Elapsed.Seconds() }

// StepsPerSecond is Steps divided by Elapsed.
func (r Result) StepsPerSecond() float64 { return float64(r.Steps) / r.Elapsed.Seconds() }

// String formats the result as one report line.
func (r Result) String() string {
	return fmt.Sprintf("%-12s runs=%-5d concurrency=%-3d elapsed=%-12s runs/s=%10.1f steps/s=%10.1f",
		r.Engine, r.Runs, r.Concurrency, r.Elapsed.Round(time.Microsecond), r.RunsPerSecond(), r.StepsPerSecond())
}

// chainEngine is what a measured engine offers the harness.
type chainEngine interface {
	// start schedules one chain run and returns its id.
	start(ctx context.Context, i int) (string, error)
	// done reports whether the run is finished; a run that finished without completing is an
	// error.
	done(ctx context.Context, id string) (bool, error)
}

// measure starts runs chain runs on e, then polls each run in turn every interval until it is
// finished, and returns the time from the first start to the last completion observed.
func measure(ctx context.Context, e chainEngine, runs int, interval time.Duration) (time.Duration, error) {
	ids := make([]string, runs)
	begin := time.Now()
	for i := range ids {
		id, err := e.start(ctx, i)
		if err != nil {
			return 0, fmt.Errorf("start run %d: %w", i, err)
		}
		ids[i] = id
	}
	for _, id := range ids {
		for {
			ok, err := e.done(ctx, id)
			if err != nil {
				return 0, fmt.Errorf("poll run %s: %w", id, err)
			}
			if ok {
				break
			}
			select {
			case <-ctx.Done():
				return 0, fmt.Errorf("poll run %s: %w", id, ctx.Err())
			case <-time.After(interval):
			}
		}
	}
	return time.Since(begin), nil
}

// Median returns the median of xs (the mean of the middle two for an even count; 0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
