//go:build integration

package exampleapp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// firstStepRounds is how many starts BenchmarkIntegrationStartToFirstStep_IdleApp measures on
// each app per iteration.
const firstStepRounds = 15

// idleFor is how long both apps sit idle before each round's starts.
const idleFor = 3 * time.Second

// BenchmarkIntegrationStartToFirstStep_IdleApp measures, under the emulated Functions host on
// Azurite, how long a run started on an app idle for 3 s takes to reach its first step:
// from its run_started row to the commit of its first node (both stamped by the handler's
// clock), a data_pipeline run whose first node is pure. Two apps of the same binary run side
// by side, one with FUNCGRAPH_RECEIVE_ON_START=off (the queue trigger delivers the first work
// item after its polling back-off, up to host.json's maxPollingInterval of 2 s) and one with
// the default (the start receives its item itself); each round lets both sit idle, then starts
// one run on each, in alternating order. It reports both apps' p50 and p90 in milliseconds and
// the ratio of the p50s (off / on).
//
//	go build -o bin/funcgraph ./handler
//	FUNCGRAPH_TEST_HANDLER_BIN=$PWD/bin/funcgraph go test -tags integration -run '^$' \
//	  -bench IntegrationStartToFirstStep -benchtime 1x ./pkg/exampleapp/
func BenchmarkIntegrationStartToFirstStep_IdleApp(b *testing.B) {
	bin := os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN")
	if bin == "" {
		b.Fatal("FUNCGRAPH_TEST_HANDLER_BIN is not set: run integration tests through `make test`")
	}
	apps := []*functionsApp{
		startFunctionsAppWith(b, bin, functionsOptions{env: map[string]string{"FUNCGRAPH_RECEIVE_ON_START": "off"}}),
		startFunctionsAppWith(b, bin, functionsOptions{}),
	}
	var delays [2][]time.Duration
	n := 0
	for b.Loop() {
		for round := range firstStepRounds {
			time.Sleep(idleFor)
			for k := range 2 {
				i := (round + k) % 2
				n++
				delays[i] = append(delays[i], apps[i].firstStepDelay(fmt.Sprintf("first-%d", n)))
			}
		}
	}
	b.StopTimer()
	p := func(d []time.Duration, q float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(p(delays[0], 0.5), "trigger-p50-ms")
	b.ReportMetric(p(delays[0], 0.9), "trigger-p90-ms")
	b.ReportMetric(p(delays[1], 0.5), "receive-p50-ms")
	b.ReportMetric(p(delays[1], 0.9), "receive-p90-ms")
	b.ReportMetric(p(delays[0], 0.5)/p(delays[1], 0.5), "p50-trigger/receive")
	b.ReportMetric(0, "ns/op")
}

// firstStepDelay starts a data_pipeline run id, waits for it to complete and returns the time
// from its run_started row to the commit of its first node.
func (a *functionsApp) firstStepDelay(id string) time.Duration {
	a.t.Helper()
	if status, body := a.do("POST", "/api/graphs/data_pipeline/runs",
		`{"instance_id":"`+id+`","input":{"source_url":"https://example.com/data"}}`); status != http.StatusAccepted {
		a.t.Fatalf("start: %d %s", status, body)
	}
	if status, _ := a.wait(id, time.Minute); status != string(engine.StatusCompleted) {
		a.t.Fatalf("run %s: %s, want Completed", id, status)
	}
	_, body := a.do("GET", "/api/runs/"+id+"/history?limit=100", "")
	var h struct {
		Events []struct {
			Type      string    `json:"type"`
			Node      string    `json:"node"`
			Timestamp time.Time `json:"timestamp"`
		} `json:"events"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		a.t.Fatal(err)
	}
	var started, first time.Time
	for _, e := range h.Events {
		switch {
		case e.Type == engine.HistoryRunStarted:
			started = e.Timestamp
		case e.Type == engine.HistoryNodeCompleted && first.IsZero():
			first = e.Timestamp
		}
	}
	if started.IsZero() || first.IsZero() {
		a.t.Fatalf("run %s: no run_started or node_completed row: %s", id, body)
	}
	return first.Sub(started)
}
