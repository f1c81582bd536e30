package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/procmem"
)

// BenchmarkServeMemory_WaitingRuns measures the memory of `funcgraph serve` on the in-memory
// backend (no storage configured: `make run`) holding support_agent refund runs that wait for
// their "approval" event: the runs are started over HTTP (POST /api/graphs/support_agent/runs,
// 16 at a time), and measured once every one reads waiting_for_event. Target: 10 000 runs in
// ≤ 60 MB RSS. The process runs with GODEBUG=gctrace=1; the live heap after its last GC is
// read from that trace, and the figures are read once a GC has run after every run waits
// (health checks make the garbage that brings it), so the live heap holds every run. It
// reports, per waiting run, the RSS and the live heap above the idle process's (an idle
// process that has not collected yet is below the first GC's 4 MB goal: counted as 0, which
// overstates the per-run figure a little).
//
// The binary is FUNCGRAPH_TEST_HANDLER_BIN (`make bench` builds bin/funcgraph and sets it);
// FUNCGRAPH_BENCH_WAITING_RUNS overrides the number of runs (default 10 000).
func BenchmarkServeMemory_WaitingRuns(b *testing.B) {
	runs, bin, err := procmem.BenchSettings(10000, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var idle, idleHeap, waiting, peak, heap float64
	for range b.N {
		s := startServer(b, bin)
		time.Sleep(time.Second)
		idle += s.MB("VmRSS")
		idleHeap += s.liveHeapMB()
		t0 := time.Now()
		ids := s.startRuns(b, runs)
		s.awaitWaiting(b, ids)
		b.Logf("%d runs waiting after %s", runs, time.Since(t0).Round(time.Millisecond))
		s.awaitGC(b)
		time.Sleep(time.Second)
		waiting += s.MB("VmRSS")
		peak += s.MB("VmHWM")
		heap += s.liveHeapMB()
		s.Stop()
	}
	n := float64(b.N)
	b.ReportMetric(idle/n, "idle-RSS-MB")
	b.ReportMetric(waiting/n, "RSS-MB")
	b.ReportMetric(peak/n, "peak-RSS-MB")
	b.ReportMetric(heap/n, "live-heap-MB")
	b.ReportMetric((waiting-idle)/n*1e6/float64(runs), "RSS-B/run")
	b.ReportMetric((heap-idleHeap)/n*1e6/float64(runs), "heap-B/run")
	b.ReportMetric(float64(runs), "runs")
	b.ReportMetric(0, "ns/op")
}

// server is the `funcgraph serve` process under measure, with a client of its API.
type server struct {
	*procmem.Server
	base   string
	client *http.Client
}

const benchKey = "bench-key"

func startServer(b *testing.B, bin string) *server {
	b.Helper()
	// No storage setting: the in-memory backend, as `make run`.
	ps, err := procmem.StartServer(bin, "FUNCGRAPH_FUNCTION_KEY="+benchKey, "FUNCGRAPH_LOG_LEVEL=warn",
		"FUNCTIONS_CUSTOMHANDLER_PORT=", "AzureWebJobsStorage=")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ps.Stop)
	return &server{Server: ps, base: "http://" + ps.Addr,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}}
}

// liveHeapMB is the live heap after the last GC, 0 before the first.
func (s *server) liveHeapMB() float64 {
	mb, _, _ := s.LiveHeapMB()
	return mb
}

// awaitGC calls the health route until the process has run a GC since the call (at most
// 30 s): the trace's live heap is then that of the settled process.
func (s *server) awaitGC(b *testing.B) {
	b.Helper()
	_, before, _ := s.LiveHeapMB()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, line, _ := s.LiveHeapMB(); line != before {
			b.Logf("GC after the runs wait: %s", line)
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("no GC within 30 s of the runs waiting")
		}
		if _, code, err := s.call(http.MethodGet, "/api/health", nil); err != nil || code != http.StatusOK {
			b.Fatalf("health: %d %v", code, err)
		}
	}
}

func (s *server) call(method, path string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, s.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("x-functions-key", benchKey)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return out, resp.StatusCode, err
}

// startRuns starts n support_agent refund runs, 16 at a time, and returns their ids.
func (s *server) startRuns(b *testing.B, n int) []string {
	b.Helper()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || b.Failed() {
					return
				}
				ids[i] = fmt.Sprintf("wait-%06d", i)
				body := fmt.Appendf(nil, `{"instance_id":%q,"input":{"user_message":"I want a refund for order %d"}}`, ids[i], i)
				out, code, err := s.call(http.MethodPost, "/api/graphs/support_agent/runs", body)
				if err != nil || code/100 != 2 {
					b.Errorf("start run %d: %d %s %v", i, code, out, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return ids
}

// awaitWaiting polls every run until it waits for its approval.
func (s *server) awaitWaiting(b *testing.B, ids []string) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for _, id := range ids {
		for {
			out, code, err := s.call(http.MethodGet, "/api/runs/"+id, nil)
			if err != nil || code != http.StatusOK {
				b.Fatalf("read run %s: %d %s %v", id, code, out, err)
			}
			var run struct {
				Status string `json:"runtime_status"`
				Custom struct {
					Waiting string `json:"waiting_for_event"`
				} `json:"custom_status"`
			}
			if err := json.Unmarshal(out, &run); err != nil {
				b.Fatalf("decode run %s: %v", id, err)
			}
			if run.Custom.Waiting == "approval" {
				break
			}
			if run.Status != "Running" && run.Status != "Pending" {
				b.Fatalf("run %s ended %s before its approval", id, run.Status)
			}
			if time.Now().After(deadline) {
				b.Fatalf("run %s not waiting after 10 minutes", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
