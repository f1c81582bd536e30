package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/funcgraph/funcgraph/bench/svgplot"
)

// The figures of docs/benchmarks.md, one function per section: each writes its table to md and
// its chart (file name → SVG) to charts, linked from the page through in.chart.

func engineSection(md *strings.Builder, in inputs, charts map[string]string) {
	md.WriteString("### Embedded engine vs durabletask-go (`cd bench && go run ./cmd/benchcompare`)\n\n")
	if in.compare == nil {
		md.WriteString("No `benchcompare.json` in this run.\n\n")
		return
	}
	c := in.compare
	md.WriteString("| 3-step chain, in-memory backends | funcgraph | durabletask-go v0.6.0 (SQLite in memory) | ratio (median of rounds) | target |\n|---|---|---|---|---|\n")
	for _, p := range c.Headline {
		fmt.Fprintf(md, "| %d runs, concurrency %d, median of %d interleaved rounds | %.0f runs/s | %.1f runs/s | **%.1f×** | ≥ 100×: %s |\n",
			p.Runs, p.Concurrency, p.Rounds, p.Funcgraph, p.DurableTask, p.Ratio, verdict(p.Ratio >= 100))
	}
	for _, n := range []int{200, 1000} {
		name := fmt.Sprintf("BenchmarkEngine_Chain3_%dRuns", n)
		if a, ok := in.local.median(name, "allocs/op"); ok {
			rps, _ := in.local.median(name, "runs/s")
			bop, _ := in.local.median(name, "B/op")
			fmt.Fprintf(md, "| engine alone (`%s`) | %.0f runs/s, %.0f allocs and %.1f kB per run | — | — | — |\n", name, rps, a/float64(n), bop/float64(n)/1000)
		}
	}
	md.WriteString("\n")
	if len(c.Sweep) == 0 {
		return
	}
	ch := svgplot.Chart{Title: "3-step chain, 200 runs: throughput against concurrency", XLabel: "worker concurrency (both engines)",
		YLabel: "runs/s (median of rounds)", LogX: true, Note: "benchcompare.json of " + c.When}
	fg, dt := svgplot.Series{Name: "funcgraph"}, svgplot.Series{Name: "durabletask-go"}
	md.WriteString("| concurrency | funcgraph runs/s | durabletask-go runs/s | ratio |\n|---|---|---|---|\n")
	for _, p := range c.Sweep {
		ch.X = append(ch.X, float64(p.Concurrency))
		fg.Values, dt.Values = append(fg.Values, p.Funcgraph), append(dt.Values, p.DurableTask)
		fmt.Fprintf(md, "| %d | %.0f | %.1f | %.1f× |\n", p.Concurrency, p.Funcgraph, p.DurableTask, p.Ratio)
	}
	ch.Series = []svgplot.Series{fg, dt}
	charts["throughput.svg"] = svgplot.Line(ch)
	md.WriteString("\n" + in.chart("Throughput against concurrency", "throughput.svg"))
}

// invokeRows are the invoke benchmarks: funcgraph's, then the bare peer's.
var invokeRows = []struct{ what, fg, bare string }{
	{"host.Func echo, in process (the framework's own cost)", "BenchmarkInvokeFuncEchoCustomHandler", "BenchmarkInvokeBareNetHTTP"},
	{"host.Func echo, over loopback HTTP", "BenchmarkInvokeFuncEchoCustomHandlerLoopback", "BenchmarkInvokeBareNetHTTPLoopback"},
	{"echo_agent (checkpoint per call), in process", "BenchmarkInvokeEchoCustomHandler", "BenchmarkInvokeBareNetHTTP"},
	{"echo_agent, over loopback HTTP", "BenchmarkInvokeEchoCustomHandlerLoopback", "BenchmarkInvokeBareNetHTTPLoopback"},
}

func invokeSection(md *strings.Builder, in inputs, charts map[string]string) {
	md.WriteString("### Invoke through the custom-handler protocol vs bare `net/http` (`pkg/host`)\n\n")
	md.WriteString("| Graph, path | funcgraph: ns/op, p50, allocs | bare `net/http` echo: ns/op, p50, allocs | throughput ratio | target |\n|---|---|---|---|---|\n")
	found := false
	for _, r := range invokeRows {
		fns, ok1 := in.local.median(r.fg, "ns/op")
		bns, ok2 := in.local.median(r.bare, "ns/op")
		if !ok1 || !ok2 {
			continue
		}
		found = true
		fp, _ := in.local.median(r.fg, "p50-µs")
		bp, _ := in.local.median(r.bare, "p50-µs")
		fa, _ := in.local.median(r.fg, "allocs/op")
		ba, _ := in.local.median(r.bare, "allocs/op")
		target := 0.6
		if strings.Contains(r.what, "loopback") {
			target = 0.9
		}
		ratio := bns / fns
		fmt.Fprintf(md, "| %s (`%s`) | %.1f µs, %.1f µs, %.0f | %.1f µs, %.1f µs, %.0f | **%.2f×** | ≥ %.1f×: %s |\n",
			r.what, strings.TrimPrefix(r.fg, "Benchmark"), fns/1000, fp, fa, bns/1000, bp, ba, ratio, target, verdict(ratio >= target))
	}
	if !found {
		md.WriteString("| (no invoke benchmarks in this run) | | | | |\n")
	}
	md.WriteString("\n")
	pcts := []string{"p10", "p25", "p50", "p75", "p90", "p99"}
	ch := svgplot.Chart{Title: "Invoke latency distribution: host.Func echo vs bare net/http", XLabel: "percentile",
		YLabel: "latency (µs)", X: []float64{10, 25, 50, 75, 90, 99}, XNames: pcts, Note: "bench.txt, " + in.stamp}
	for _, s := range []struct{ name, bench string }{
		{"funcgraph, in process", "BenchmarkInvokeFuncEchoCustomHandler"}, {"bare, in process", "BenchmarkInvokeBareNetHTTP"},
		{"funcgraph, loopback", "BenchmarkInvokeFuncEchoCustomHandlerLoopback"}, {"bare, loopback", "BenchmarkInvokeBareNetHTTPLoopback"},
	} {
		ser := svgplot.Series{Name: s.name}
		for _, p := range pcts {
			v, ok := in.local.median(s.bench, p+"-µs")
			if !ok {
				v = math.NaN()
			}
			ser.Values = append(ser.Values, v)
		}
		ch.Series = append(ch.Series, ser)
	}
	if found {
		charts["invoke-latency.svg"] = svgplot.Line(ch)
		md.WriteString(in.chart("Invoke latency distribution", "invoke-latency.svg"))
	}
}

func memorySection(md *strings.Builder, in inputs, charts map[string]string) {
	md.WriteString("### Memory of runs waiting for an event\n\n")
	md.WriteString("| Process | runs waiting | RSS | live heap | per waiting run (RSS / heap above idle) | target |\n|---|---|---|---|---|---|\n")
	ch := svgplot.Chart{Title: "Memory against waiting support_agent runs", YLabel: "MB", Note: in.stamp}
	rss, heap := svgplot.Series{Name: "RSS"}, svgplot.Series{Name: "live heap"}
	const local = "BenchmarkServeMemory_WaitingRuns"
	if v, ok := in.local.median(local, "RSS-MB"); ok {
		runs, _ := in.local.median(local, "runs")
		idle, _ := in.local.median(local, "idle-RSS-MB")
		h, _ := in.local.median(local, "live-heap-MB")
		pr, _ := in.local.median(local, "RSS-B/run")
		ph, _ := in.local.median(local, "heap-B/run")
		fmt.Fprintf(md, "| `funcgraph serve`, in-memory backend (`%s`) | %.0f | %.1f MB (idle %.1f) | %.1f MB | %.1f kB / %.1f kB | ≤ 60 MB at 10 000: %s |\n",
			local, runs, v, idle, h, pr/1000, ph/1000, verdict(runs >= 10000 && v <= 60))
		ch.XNames = append(ch.XNames, "in-memory: idle", fmt.Sprintf("in-memory: %.0f waiting", runs))
		rss.Values = append(rss.Values, idle, v)
		heap.Values = append(heap.Values, math.NaN(), h)
	}
	const azure = "BenchmarkIntegrationWorkerRSS_WaitingRuns"
	if v, ok := in.azure.median(azure, "RSS-MB"); ok {
		idle, _ := in.azure.median(azure, "idle-RSS-MB")
		h, _ := in.azure.median(azure, "live-heap-MB")
		runs := "`BENCH_AZURE_WAITING_RUNS`" // the output of a run before the benchmark reported it
		if n, ok := in.azure.median(azure, "runs"); ok {
			runs = fmt.Sprintf("%.0f", n)
		}
		heapText := fmt.Sprintf("%.1f MB", h)
		if h == 0 { // the worker's gctrace counts whole MB
			heapText = "< 1 MB"
		}
		fmt.Fprintf(md, "| worker on Azure Storage (Azurite), runs in storage (`%s`) | %s | %.1f MB (idle %.1f) | %s | — | ≤ 100 MB: %s |\n",
			azure, runs, v, idle, heapText, verdict(v <= 100))
		ch.XNames = append(ch.XNames, "Azure worker: idle", "Azure worker: waiting")
		rss.Values = append(rss.Values, idle, v)
		heap.Values = append(heap.Values, math.NaN(), h)
	}
	md.WriteString("\n")
	if len(ch.XNames) > 0 {
		ch.Series = []svgplot.Series{rss, heap}
		charts["memory.svg"] = svgplot.Bars(ch)
		md.WriteString(in.chart("Memory against waiting runs", "memory.svg"))
	}
}

func azureSection(md *strings.Builder, in inputs, charts map[string]string) {
	md.WriteString("### Durable engine on Azure Storage (`make bench-azure`, Azurite)\n\n")
	if len(in.azure) == 0 {
		md.WriteString("No `bench-azure.txt` in this run.\n\n")
		return
	}
	md.WriteString("| What | median (runs) | target |\n|---|---|---|\n")
	row := func(what, bench, unit, target string, ok func(float64) bool) {
		v, found := in.azure.median(bench, unit)
		if !found {
			return
		}
		fmt.Fprintf(md, "| %s (`%s`, %s) | **%.2f** (%d) | %s: %s |\n", what, bench, unit, v, in.azure.count(bench, unit), target, verdict(ok(v)))
	}
	row("step latency / raw batch", "BenchmarkIntegrationStepLatency", "step/raw", "≤ 1.05", func(v float64) bool { return v <= 1.05 })
	row("64 concurrent runs / 64 raw committers", "BenchmarkIntegrationConcurrent64", "steps/raw", "≥ 0.95", func(v float64) bool { return v >= 0.95 })
	row("empty queue receives per iteration", "BenchmarkIntegrationConcurrent64", "empty-receives", "fewer", func(float64) bool { return true })
	row("step 1 000 / step 10", "BenchmarkIntegrationStepAt10VsAt1000", "step@1000/step@10", "≤ 1.05", func(v float64) bool { return v <= 1.05 })
	row("raw commit 1 000 / raw commit 10", "BenchmarkIntegrationStepAt10VsAt1000", "raw@1000/raw@10", "(peer)", func(float64) bool { return true })
	row("table batches per steady step", "BenchmarkIntegrationOpsPerStep", "table-batches/step", "1", func(v float64) bool { return v <= 1 })
	row("queue operations per steady step", "BenchmarkIntegrationOpsPerStep", "queue-ops/step", "≤ 1", func(v float64) bool { return v <= 1 })
	row("in-memory table operations per steady step", "BenchmarkIntegrationOpsPerStep", "mem-table-ops/step", "1", func(v float64) bool { return v <= 1 })
	md.WriteString("\n")
	const steps = "BenchmarkIntegrationStepAt10VsAt1000"
	ch := svgplot.Chart{Title: "Step latency along one run: engine vs raw batch (Azurite)", XLabel: "step index (100-step windows)",
		YLabel: "ms per step (median of runs)", Note: in.stamp}
	eng, raw := svgplot.Series{Name: "engine step"}, svgplot.Series{Name: "raw batch"}
	for _, w := range []int{10, 100, 250, 500, 750, 1000} {
		e, ok1 := in.azure.median(steps, fmt.Sprintf("ms/step-window@%d", w))
		r, ok2 := in.azure.median(steps, fmt.Sprintf("ms/raw-window@%d", w))
		if !ok1 || !ok2 {
			continue
		}
		ch.X = append(ch.X, float64(w))
		eng.Values, raw.Values = append(eng.Values, e), append(raw.Values, r)
	}
	if len(ch.X) > 1 {
		ch.Series = []svgplot.Series{eng, raw}
		charts["step-latency.svg"] = svgplot.Line(ch)
		md.WriteString(in.chart("Step latency against step index", "step-latency.svg"))
	}
}
