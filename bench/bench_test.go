package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// engineUnderTest is what the tests and benchmarks drive.
type engineUnderTest interface {
	chainEngine
	Run(ctx context.Context, runs int) (Result, error)
	Output(ctx context.Context, id string) (json.RawMessage, error)
}

func newEngines(t testing.TB, concurrency int) map[string]engineUnderTest {
	t.Helper()
	dt, err := NewDurableTask(context.Background(), concurrency, DefaultPollInterval)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dt.Close(context.Background()) })
	fg, err := NewFuncgraph(context.Background(), concurrency, DefaultPollInterval)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fg.Close() })
	return map[string]engineUnderTest{"durabletask": dt, "funcgraph": fg}
}

func TestChain_BothEngines_VisitEveryNodeInOrder(t *testing.T) {
	for name, e := range newEngines(t, 4) {
		t.Run(name, func(t *testing.T) {
			ids := make([]string, 5)
			for i := range ids {
				id, err := e.start(t.Context(), i)
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				ids[i] = id
			}
			if _, err := measure(t.Context(), &pollOnly{e, ids}, len(ids), DefaultPollInterval); err != nil {
				t.Fatalf("wait: %v", err)
			}
			for i, id := range ids {
				out, err := e.Output(t.Context(), id)
				if err != nil {
					t.Fatalf("output: %v", err)
				}
				var s chainState
				if err := json.Unmarshal(out, &s); err != nil {
					t.Fatalf("decode %s: %v", out, err)
				}
				if s.Seed != i || fmt.Sprint(s.Trail) != "[step_1 step_2 step_3]" {
					t.Fatalf("run %d state = %+v, want seed %d and the three steps", i, s, i)
				}
			}
		})
	}
}

func TestResult_Rates_DivideByElapsed(t *testing.T) {
	r := Result{Runs: 200, Steps: 600, Elapsed: 2e9}
	if r.RunsPerSecond() != 100 || r.StepsPerSecond() != 300 {
		t.Fatalf("rates = %v, %v; want 100, 300", r.RunsPerSecond(), r.StepsPerSecond())
	}
}

// pollOnly replays already started runs through measure.
type pollOnly struct {
	e   chainEngine
	ids []string
}

func (p *pollOnly) start(_ context.Context, i int) (string, error) { return p.ids[i], nil }
func (p *pollOnly) done(ctx context.Context, id string) (bool, error) {
	return p.e.done(ctx, id)
}

func benchmarkChain(b *testing.B, engine string, runs int) {
	e := newEngines(b, 8)[engine]
	if _, err := e.Run(b.Context(), 20); err != nil { // warm-up
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var total Result
	for range b.N {
		r, err := e.Run(b.Context(), runs)
		if err != nil {
			b.Fatal(err)
		}
		total.Runs += r.Runs
		total.Steps += r.Steps
		total.Elapsed += r.Elapsed
	}
	b.ReportMetric(total.RunsPerSecond(), "runs/s")
	b.ReportMetric(total.StepsPerSecond(), "steps/s")
}

func BenchmarkChain_DurableTask_200(b *testing.B) { benchmarkChain(b, "durabletask", 200) }
func BenchmarkChain_Funcgraph_200(b *testing.B)   { benchmarkChain(b, "funcgraph", 200) }
func BenchmarkChain_Funcgraph_1000(b *testing.B)  { benchmarkChain(b, "funcgraph", 1000) }
