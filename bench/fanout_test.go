package bench

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// newFanOuts starts both engines for fan-outs of width.
func newFanOuts(t testing.TB, concurrency, width int) map[string]engineUnderTest {
	t.Helper()
	dt, err := NewDurableTaskFanOut(context.Background(), concurrency, width, DefaultPollInterval)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dt.Close(context.Background()) })
	fg, err := NewFuncgraphFanOut(context.Background(), concurrency, width, DefaultPollInterval)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fg.Close() })
	return map[string]engineUnderTest{"durabletask": dt, "funcgraph": fg}
}

func TestFanOut_BothEngines_SquareEveryItemInOrder(t *testing.T) {
	const width = 10
	for name, e := range newFanOuts(t, 4, width) {
		t.Run(name, func(t *testing.T) {
			ids := make([]string, 3)
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
			want := []int{1, 4, 9, 16, 25, 36, 49, 64, 81, 100}
			for _, id := range ids {
				out, err := e.Output(t.Context(), id)
				if err != nil {
					t.Fatalf("output: %v", err)
				}
				var s fanState
				if err := json.Unmarshal(out, &s); err != nil {
					t.Fatalf("decode %s: %v", out, err)
				}
				if !slices.Equal(s.Squares, want) || s.Total != 385 {
					t.Fatalf("run %s state = %+v, want the squares of 1..10 in order and 385", id, s)
				}
			}
		})
	}
}

// benchmarkFanOut measures runs fan-outs of width per iteration at concurrency 8 and reports
// runs/s and branches/s (a branch: one funcgraph branch, one durabletask-go activity).
func benchmarkFanOut(b *testing.B, engine string, runs, width int) {
	e := newFanOuts(b, 8, width)[engine]
	if _, err := e.Run(b.Context(), 2); err != nil { // warm-up
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
	b.ReportMetric(total.StepsPerSecond(), "branches/s")
}

func BenchmarkFanOut10_DurableTask_20(b *testing.B) { benchmarkFanOut(b, "durabletask", 20, 10) }
func BenchmarkFanOut10_Funcgraph_20(b *testing.B)   { benchmarkFanOut(b, "funcgraph", 20, 10) }
func BenchmarkFanOut100_DurableTask_2(b *testing.B) { benchmarkFanOut(b, "durabletask", 2, 100) }
func BenchmarkFanOut100_Funcgraph_2(b *testing.B)   { benchmarkFanOut(b, "funcgraph", 2, 100) }
