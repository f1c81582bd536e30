package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/bench"
)

// results are the metrics of `go test -bench` output: benchmark name (without its -N
// suffix) → unit → one value per line the benchmark printed (-count).
type results map[string]map[string][]float64

// readGoBench parses a file of `go test -bench` output; a missing file is no results.
func readGoBench(path string) (results, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return results{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseGoBench(bufio.NewScanner(f)), nil
}

func parseGoBench(sc *bufio.Scanner) results {
	out := results{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		m := out[name]
		if m == nil {
			m = map[string][]float64{}
			out[name] = m
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			m[f[i+1]] = append(m[f[i+1]], v)
		}
	}
	return out
}

// median returns the median of a benchmark's metric over its lines, and whether it was found.
func (r results) median(name, unit string) (float64, bool) {
	vs := r[name][unit]
	if len(vs) == 0 {
		return 0, false
	}
	return bench.Median(vs), true
}

// count returns how many lines of the benchmark carried the metric.
func (r results) count(name, unit string) int { return len(r[name][unit]) }
