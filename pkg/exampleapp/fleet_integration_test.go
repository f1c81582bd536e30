//go:build integration

package exampleapp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// The fleet tests run the example app as standalone worker processes (the binary that
// `make test` builds) on one Azurite: the durable runs live in Azure Tables, Queues and Blobs
// and every worker's embedded dispatcher takes work items from the same queue.

const fleetKey = "fleet-key"

// fleetRun is one run of the test and what it must end as.
type fleetRun struct {
	id, graph, input string
	event            string // approval payload, "" for none
	wantOutput       any
	wantPath         []string // type/node of the committed steps, as a sequential execution gives
}

// fleetRuns builds n runs over the three example graphs, a third of the support_agent runs
// waiting for an approval event, with the outcome of each computed by the in-memory engine.
func fleetRuns(t *testing.T, n int, seed uint64) []*fleetRun {
	t.Helper()
	texts := []string{"How do I reset my password?", "This is terrible, I am angry", "Great product, thanks", "hello"}
	runs := make([]*fleetRun, n)
	for i := range runs {
		r := &fleetRun{id: fmt.Sprintf("fleet-%d-%03d", seed, i)}
		switch i % 3 {
		case 0:
			r.graph, r.input = "data_pipeline", fmt.Sprintf(`{"source_url":"https://example.com/data/%d"}`, i)
		case 1:
			r.graph, r.input = "content_classifier", fmt.Sprintf(`{"text":%q}`, texts[i%len(texts)])
		default:
			if i%2 == 0 {
				r.graph, r.input = "support_agent", fmt.Sprintf(`{"user_message":"I want a refund for order %d"}`, i)
				r.event = fmt.Sprintf(`{"approved":true,"reviewer":"reviewer-%d"}`, i)
			} else {
				r.graph, r.input = "support_agent", fmt.Sprintf(`{"user_message":"hello %d"}`, i)
			}
		}
		runs[i] = r
	}
	oracle(t, runs)
	return runs
}

// oracle runs every run alone on the in-memory engine and records its output and path.
func oracle(t *testing.T, runs []*fleetRun) {
	t.Helper()
	reg := durable.NewRegistry()
	gs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, r := range runs {
		if _, err := eng.StartRun(ctx, engine.StartRunRequest{GraphName: r.graph, InstanceID: r.id, Input: json.RawMessage(r.input)}); err != nil {
			t.Fatal(err)
		}
		if r.event != "" {
			if err := eng.RaiseEvent(ctx, r.id, "approval", json.RawMessage(r.event)); err != nil {
				t.Fatal(err)
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		run, err := eng.WaitRun(wctx, r.id, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
		cancel()
		if err != nil || run.RuntimeStatus != engine.StatusCompleted {
			t.Fatalf("oracle %s: %v %v", r.id, run.RuntimeStatus, err)
		}
		if err := json.Unmarshal(run.Output, &r.wantOutput); err != nil {
			t.Fatal(err)
		}
		h, err := eng.History(ctx, r.id, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range h.Events {
			if committedStep(e.Type) {
				r.wantPath = append(r.wantPath, e.Type+"/"+e.Node)
			}
		}
	}
}

// committedStep reports the history rows whose order a run's graph alone decides.
func committedStep(typ string) bool {
	switch typ {
	case engine.HistoryNodeCompleted, engine.HistoryRouteResolved, engine.HistoryEventApplied, engine.HistoryRunCompleted:
		return true
	}
	return false
}

// fleet is a set of worker processes sharing one storage prefix on Azurite.
type fleet struct {
	t     *testing.T
	bin   string
	env   []string
	addrs []string

	mu    sync.Mutex
	procs []*exec.Cmd
	logs  []*bytes.Buffer
	alive []bool
}

func newFleet(t *testing.T, workers int, extraEnv ...string) *fleet {
	t.Helper()
	bin := os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN")
	if bin == "" {
		t.Fatal("FUNCGRAPH_TEST_HANDLER_BIN is not set: run integration tests through `make test`")
	}
	f := &fleet{t: t, bin: bin, procs: make([]*exec.Cmd, workers), alive: make([]bool, workers)}
	f.env = append(os.Environ(),
		"AzureWebJobsStorage="+azuritetest.ConnectionString(t),
		"FUNCGRAPH_STORAGE_PREFIX="+azuritetest.UniqueName("f"),
		"FUNCGRAPH_FUNCTION_KEY="+fleetKey,
		"FUNCGRAPH_LOG_LEVEL=debug",
		"FUNCTIONS_CUSTOMHANDLER_PORT=",
	)
	f.env = append(f.env, extraEnv...)
	for range workers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f.addrs = append(f.addrs, ln.Addr().String())
		ln.Close()
		f.logs = append(f.logs, &bytes.Buffer{})
	}
	for i := range workers {
		f.start(i)
	}
	t.Cleanup(func() {
		for i := range workers {
			f.kill(i)
		}
	})
	return f
}

// syncBuffer guards a worker's log buffer.
type syncWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (f *fleet) start(i int) {
	cmd := exec.Command(f.bin, "serve", "--addr", f.addrs[i])
	cmd.Env = f.env
	cmd.Stdout = syncWriter{&f.mu, f.logs[i]}
	cmd.Stderr = syncWriter{&f.mu, f.logs[i]}
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", f.addrs[i])
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("worker %d did not listen", i)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.mu.Lock()
	f.procs[i], f.alive[i] = cmd, true
	f.mu.Unlock()
}

// kill ends worker i with SIGKILL, as a crashed or scaled-in instance ends.
func (f *fleet) kill(i int) {
	f.mu.Lock()
	cmd, alive := f.procs[i], f.alive[i]
	f.alive[i] = false
	f.mu.Unlock()
	if !alive {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// count counts a log line fragment over every worker's log.
func (f *fleet) count(fragment string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, b := range f.logs {
		n += strings.Count(b.String(), fragment)
	}
	return n
}

// do sends a request to a live worker, trying others while the chosen one is down. sent
// reports whether a request may have reached a server (for the caller's retry rules).
func (f *fleet) do(rng *rand.Rand, method, path, body string, header map[string]string) (int, []byte) {
	client := &http.Client{Timeout: 30 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		i := rng.IntN(len(f.addrs))
		req, _ := http.NewRequest(method, "http://"+f.addrs[i]+path, strings.NewReader(body))
		req.Header.Set("x-functions-key", fleetKey)
		req.Header.Set("content-type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return resp.StatusCode, b
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s %s: no worker answered: %v", method, path, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// drive starts every run (16 clients), sends each approval event at a random moment, and waits
// until every run has finished.
func (f *fleet) drive(runs []*fleetRun, seed uint64) (accepted map[string]int) {
	t := f.t
	var next atomic.Int64
	var amu sync.Mutex
	accepted = map[string]int{}
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			for {
				i := int(next.Add(1) - 1)
				if i >= len(runs) {
					return
				}
				r := runs[i]
				body := fmt.Sprintf(`{"input":%s,"instance_id":%q}`, r.input, r.id)
				status, b := f.do(rng, "POST", "/api/graphs/"+r.graph+"/runs", body, nil)
				// 409: an earlier attempt reached a worker that died before answering.
				if status != http.StatusAccepted && status != http.StatusConflict {
					t.Errorf("start %s: %d %s", r.id, status, b)
					continue
				}
				if r.event == "" {
					continue
				}
				if rng.IntN(2) == 0 { // half the events arrive after the run waits
					time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				}
				status, b = f.do(rng, "POST", "/api/runs/"+r.id+"/events/approval", r.event, map[string]string{"Idempotency-Key": r.id + "-approval"})
				if status != http.StatusAccepted {
					t.Errorf("event %s: %d %s", r.id, status, b)
					continue
				}
				amu.Lock()
				accepted[r.id]++
				amu.Unlock()
			}
		}()
	}
	wg.Wait()
	rng := rand.New(rand.NewPCG(seed, 99))
	deadline := time.Now().Add(4 * time.Minute)
	for _, r := range runs {
		for {
			_, b := f.do(rng, "GET", "/api/runs/"+r.id, "", nil)
			var st struct {
				Status string `json:"runtime_status"`
			}
			_ = json.Unmarshal(b, &st)
			if engine.RunStatus(st.Status).Finished() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s did not finish: %s", r.id, b)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return accepted
}

// verify checks every run's final state, history and events, and returns how many committed
// steps the runs hold in all.
func (f *fleet) verify(runs []*fleetRun, accepted map[string]int) int {
	t := f.t
	rng := rand.New(rand.NewPCG(7, 7))
	steps := 0
	for _, r := range runs {
		_, b := f.do(rng, "GET", "/api/runs/"+r.id, "", nil)
		var st struct {
			Status string `json:"runtime_status"`
			Output any    `json:"output"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("status %s: %v", r.id, err)
		}
		if st.Status != string(engine.StatusCompleted) || !reflect.DeepEqual(st.Output, r.wantOutput) {
			t.Errorf("run %s: %s %v, want Completed %v", r.id, st.Status, st.Output, r.wantOutput)
			continue
		}
		_, b = f.do(rng, "GET", "/api/runs/"+r.id+"/history?limit=1000", "", nil)
		var h struct {
			Events []struct {
				Sequence int64  `json:"sequence"`
				Type     string `json:"type"`
				Node     string `json:"node"`
			} `json:"events"`
			Continuation *string `json:"continuation_token"`
		}
		if err := json.Unmarshal(b, &h); err != nil || h.Continuation != nil {
			t.Fatalf("history %s: %v (one page expected)", r.id, err)
		}
		var path []string
		applied := 0
		for i, e := range h.Events {
			if e.Sequence != int64(i+1) {
				t.Errorf("run %s: history has a gap or a repeat at %d (sequence %d)", r.id, i+1, e.Sequence)
				break
			}
			if committedStep(e.Type) {
				path = append(path, e.Type+"/"+e.Node)
			}
			if e.Type == engine.HistoryEventApplied {
				applied++
			}
		}
		if !reflect.DeepEqual(path, r.wantPath) {
			t.Errorf("run %s committed\n%v\nwant (a sequential execution)\n%v", r.id, path, r.wantPath)
		}
		if accepted[r.id] > 0 && applied != 1 {
			t.Errorf("run %s: accepted event applied %d times, want once", r.id, applied)
		}
		steps += len(path)
	}
	return steps
}

// TestIntegrationFleet_TwoWorkersShareTheLoad: two standalone workers on one Azurite run 200
// concurrent runs of the three example graphs, with approval events; every run reaches the
// state a sequential execution gives, every history is gap-free, no step is committed twice.
func TestIntegrationFleet_TwoWorkersShareTheLoad(t *testing.T) {
	runs := fleetRuns(t, 200, 1)
	f := newFleet(t, 2)
	accepted := f.drive(runs, 1)
	steps := f.verify(runs, accepted)
	workers := 0
	for i := range f.logs {
		f.mu.Lock()
		if strings.Contains(f.logs[i].String(), "run completed") {
			workers++
		}
		f.mu.Unlock()
	}
	if workers != 2 {
		t.Errorf("%d of 2 workers completed runs: the load was not shared", workers)
	}
	t.Logf("200 runs, %d committed steps, %d accepted events; re-executed steps dropped by the conditional commit: %d",
		steps, len(accepted), f.count("step dropped"))
}
