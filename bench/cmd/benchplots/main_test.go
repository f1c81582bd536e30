package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
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

// TestRun_WritesChartsAndPageSection: the charts land in -dir, the section between the page's
// markers is replaced, and the page links the charts relative to itself.
func TestRun_WritesChartsAndPageSection(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "bench")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bench.txt", "BenchmarkInvokeFuncEchoCustomHandler-2 100 9000 ns/op 8.5 p50-µs 93 allocs/op\n"+
		"BenchmarkInvokeBareNetHTTP-2 100 5000 ns/op 4.5 p50-µs 40 allocs/op\n")
	write("benchcompare.json", `{"when":"now","headline":[{"runs":200,"concurrency":8,"funcgraph_runs_per_s":12000,"durabletask_runs_per_s":150,"ratio":80,"rounds":5}],
		"sweep":[{"runs":200,"concurrency":1,"funcgraph_runs_per_s":9000,"durabletask_runs_per_s":100,"ratio":90,"rounds":5},{"runs":200,"concurrency":8,"funcgraph_runs_per_s":12000,"durabletask_runs_per_s":150,"ratio":80,"rounds":5}]}`)
	page := filepath.Join(root, "benchmarks.md")
	if err := os.WriteFile(page, []byte("intro\n"+beginMark+"\nold\n"+endMark+"\nrest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, page); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(page)
	for _, want := range []string{"intro\n", "rest\n", "**80.0×**", "≥ 100×: **not met**", "**0.56×**", "](bench/throughput.svg)", "](bench/invoke-latency.svg)"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "old\n") {
		t.Error("page kept the old section")
	}
	for _, f := range []string{"throughput.svg", "invoke-latency.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("chart %s not written: %v", f, err)
		}
	}
}

// TestDefaultPage_HoldsTheFigures keeps `make bench-plots` pointed at the page that shows the
// figures: the default page has the bench-figures markers, and every chart its section links
// is a file of the default directory.
func TestDefaultPage_HoldsTheFigures(t *testing.T) {
	bench := filepath.Join("..", "..") // where make bench-plots runs the command
	page, dir := filepath.Join(bench, defaultPage), filepath.Join(bench, defaultDir)
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("default page: %v", err)
	}
	_, section, ok := strings.Cut(string(data), beginMark)
	section, _, ok2 := strings.Cut(section, endMark)
	if !ok || !ok2 {
		t.Fatalf("%s has no %q … %q section", page, beginMark, endMark)
	}
	rel, err := filepath.Rel(filepath.Dir(page), dir)
	if err != nil {
		t.Fatal(err)
	}
	charts := regexp.MustCompile(`!\[[^]]*\]\(([^)]+)\)`).FindAllStringSubmatch(section, -1)
	if len(charts) == 0 {
		t.Fatalf("the figures of %s link no chart", page)
	}
	for _, m := range charts {
		if filepath.Dir(filepath.FromSlash(m[1])) != rel {
			t.Errorf("%s links %s, not a chart of %s", page, m[1], dir)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("%s links %s: %v", page, m[1], err)
		}
	}
}
