package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGoBench_MediansOverRounds(t *testing.T) {
	out := `goos: linux
BenchmarkInvokeBareNetHTTP-2   	  246012	      4711 ns/op	 4.0 p50-µs	    3688 B/op	      40 allocs/op
PASS
BenchmarkInvokeBareNetHTTP-2   	  266136	      6414 ns/op	 4.2 p50-µs	    3688 B/op	      40 allocs/op
BenchmarkInvokeBareNetHTTP-2   	  266136	      5000 ns/op	 4.1 p50-µs	    3688 B/op	      40 allocs/op
BenchmarkServeMemory_WaitingRuns-2   	       1	     151.0 RSS-MB	        10000 runs
`
	r := parseGoBench(bufio.NewScanner(strings.NewReader(out)))
	if v, ok := r.median("BenchmarkInvokeBareNetHTTP", "ns/op"); !ok || v != 5000 {
		t.Fatalf("median ns/op = %v, %v; want 5000", v, ok)
	}
	if n := r.count("BenchmarkInvokeBareNetHTTP", "p50-µs"); n != 3 {
		t.Fatalf("count = %d, want 3", n)
	}
	if v, _ := r.median("BenchmarkServeMemory_WaitingRuns", "RSS-MB"); v != 151 {
		t.Fatalf("RSS-MB = %v, want 151", v)
	}
}

func TestRun_WritesChartsAndReadmeSection(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bench.txt", "BenchmarkInvokeFuncEchoCustomHandler-2 100 9000 ns/op 8.5 p50-µs 93 allocs/op\n"+
		"BenchmarkInvokeBareNetHTTP-2 100 5000 ns/op 4.5 p50-µs 40 allocs/op\n")
	write("benchcompare.json", `{"when":"now","headline":[{"runs":200,"concurrency":8,"funcgraph_runs_per_s":12000,"durabletask_runs_per_s":150,"ratio":80,"rounds":5}],
		"sweep":[{"runs":200,"concurrency":1,"funcgraph_runs_per_s":9000,"durabletask_runs_per_s":100,"ratio":90,"rounds":5},{"runs":200,"concurrency":8,"funcgraph_runs_per_s":12000,"durabletask_runs_per_s":150,"ratio":80,"rounds":5}]}`)
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("intro\n"+beginMark+"\nold\n"+endMark+"\nrest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, readme); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(readme)
	for _, want := range []string{"intro\n", "rest\n", "**80.0×**", "≥ 100×: **not met**", "**0.56×**", "throughput.svg", "invoke-latency.svg"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "old\n") {
		t.Error("README kept the old section")
	}
	for _, f := range []string{"throughput.svg", "invoke-latency.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("chart %s not written: %v", f, err)
		}
	}
}
