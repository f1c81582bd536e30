//go:build integration

package exampleapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// The Functions-path tests run a funcgraph binary under the host emulator with its durable
// storage on Azurite: the emulator's queue listener feeds the work queue to the app's
// fg_orchestrator queue trigger, as the Functions host does, and kills the handler process
// when an invocation passes functionTimeout.

const functionsKey = "functions-key"

// functionsApp is a binary under the emulated host.
type functionsApp struct {
	t    testing.TB
	e    *funchosttest.Emulator
	logs *logBuffer
	env  map[string]string // the app settings the emulator was given (and the staged prefix)
}

type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stageLocal runs `bin stage` into a fresh folder, as a user runs it before `func start`,
// with env added to the environment (a fresh FUNCGRAPH_STORAGE_PREFIX: the staged
// local.settings.json then names its work queue), and returns the folder.
func stageLocal(t testing.TB, bin string, env map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "local")
	cmd := exec.Command(bin, "stage", "--out", root)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("stage: %v\n%s", err, out)
	}
	return root
}

// startFunctionsApp stages bin's local folder for a fresh storage prefix and runs that folder
// under the emulator, with AzureWebJobsStorage on Azurite given through the environment (it
// wins over the staged UseDevelopmentStorage=true, as with `func start`) and env added to it.
// edit, if set, changes the staged folder first.
func startFunctionsApp(t *testing.T, bin string, functionTimeout time.Duration, env map[string]string, edit func(root string)) *functionsApp {
	t.Helper()
	return startFunctionsAppWith(t, bin, functionsOptions{functionTimeout: functionTimeout, env: env, edit: edit})
}

// functionsOptions are the knobs of startFunctionsAppWith.
type functionsOptions struct {
	functionTimeout time.Duration
	env             map[string]string
	// edit, if set, changes the staged folder before the emulator starts.
	edit func(root string)
	// queues, if set, replaces the staged host.json's extensions.queues (short back-offs for
	// tests).
	queues map[string]any
	// listenerStorage, if set, is the storage of the emulator's queue listener, so that the
	// host keeps reaching the work queue while the handler's AzureWebJobsStorage (a fault
	// proxy) does not.
	listenerStorage string
}

// startFunctionsAppWith is startFunctionsApp with the options of o.
func startFunctionsAppWith(t testing.TB, bin string, o functionsOptions) *functionsApp {
	t.Helper()
	prefix := azuritetest.UniqueName("h")
	root := stageLocal(t, bin, map[string]string{"FUNCGRAPH_STORAGE_PREFIX": prefix})
	full := map[string]string{"AzureWebJobsStorage": azuritetest.ConnectionString(t), "FUNCGRAPH_LOG_LEVEL": "info"}
	for k, v := range o.env {
		full[k] = v
	}
	if o.queues != nil {
		patchFile(t, filepath.Join(root, "host.json"), func(doc map[string]any) { doc["extensions"].(map[string]any)["queues"] = o.queues })
	}
	if ft := o.functionTimeout; ft > 0 {
		// The handler reads it too: its steps' leases (engine.Options.StepLease) end with it.
		s := int64(ft / time.Second)
		patchFile(t, filepath.Join(root, "host.json"), func(doc map[string]any) {
			doc["functionTimeout"] = fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
		})
	}
	if o.listenerStorage != "" {
		full[listenerSetting] = o.listenerStorage
		patchFile(t, filepath.Join(root, "fg_orchestrator", "function.json"), func(doc map[string]any) {
			doc["bindings"].([]any)[0].(map[string]any)["connection"] = listenerSetting
		})
	}
	if o.edit != nil {
		o.edit(root)
	}
	logs := &logBuffer{}
	e, err := funchosttest.Start(t.Context(), funchosttest.Options{
		AppRoot: root, Env: full,
		Keys:            funchost.Keys{HostFunction: map[string]string{"default": functionsKey}},
		FunctionTimeout: o.functionTimeout, Logf: logs.logf,
	})
	if err != nil {
		t.Fatalf("start emulator: %v\n%s", err, logs)
	}
	t.Cleanup(func() { _ = e.Close() })
	if errs := e.FunctionErrors(); len(errs) > 0 {
		t.Fatalf("functions failed to index: %v", errs)
	}
	env := map[string]string{"FUNCGRAPH_STORAGE_PREFIX": prefix}
	for k, v := range full {
		env[k] = v
	}
	return &functionsApp{t: t, e: e, logs: logs, env: env}
}

// listenerSetting names the app setting of the queue listener's storage (listenerStorage).
const listenerSetting = "FUNCGRAPH_TEST_LISTENER_STORAGE"

// patchFile decodes the JSON object in path, lets edit change it and writes it back.
func patchFile(t testing.TB, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// repairEvery runs the fg_repair timer every d until the test ends (the emulator does not
// run NCRONTAB schedules).
func (a *functionsApp) repairEvery(d time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	a.t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			if err := a.e.TriggerTimer(ctx, "fg_repair"); err != nil && ctx.Err() == nil {
				a.logs.logf("test: fg_repair: %v", err)
			}
		}
	}()
}

func (a *functionsApp) do(method, path, body string) (int, []byte) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.e.URL()+path, strings.NewReader(body))
	req.Header.Set("x-functions-key", functionsKey)
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// wait polls a run until it finishes and returns its status body.
func (a *functionsApp) wait(id string, within time.Duration) (status string, output json.RawMessage) {
	a.t.Helper()
	return a.waitUntil(id, within, func(s engine.RunStatus) bool { return s.Finished() })
}

// waitUntil polls a run until done accepts its status and returns its status body.
func (a *functionsApp) waitUntil(id string, within time.Duration, done func(engine.RunStatus) bool) (status string, output json.RawMessage) {
	a.t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, b := a.do("GET", "/api/runs/"+id, "")
		var st struct {
			Status string          `json:"runtime_status"`
			Output json.RawMessage `json:"output"`
		}
		_ = json.Unmarshal(b, &st)
		if done(engine.RunStatus(st.Status)) {
			return st.Status, st.Output
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("run %s: gave up waiting: %s\nemulator log:\n%s", id, b, a.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gapFree checks a run's history sequences are 1..n.
func (a *functionsApp) gapFree(id string) int {
	a.t.Helper()
	_, b := a.do("GET", "/api/runs/"+id+"/history?limit=1000", "")
	var h struct {
		Events []struct {
			Sequence int64 `json:"sequence"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		a.t.Fatal(err)
	}
	for i, e := range h.Events {
		if e.Sequence != int64(i+1) {
			a.t.Errorf("run %s: history sequence %d at position %d", id, e.Sequence, i+1)
		}
	}
	return len(h.Events)
}

// TestIntegrationFunctions_ExampleGraphsRunOnQueueTriggers: under the emulated host the
// example app starts each example graph's run over HTTP, and its steps run in
// queue-triggered invocations of fg_orchestrator (the process runs no dispatcher of its own)
// to the state a sequential execution gives: every step there with
// FUNCGRAPH_RECEIVE_ON_START=off, and with the default the first item of each start taken by the
// start itself (engine.Options.ReceiveOnStart), the rest by the trigger.
func TestIntegrationFunctions_ExampleGraphsRunOnQueueTriggers(t *testing.T) {
	t.Parallel() // independent of the package's other tests (each app its own storage prefix and ports)
	bin := os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN")
	if bin == "" {
		t.Fatal("FUNCGRAPH_TEST_HANDLER_BIN is not set: run integration tests through `make test`")
	}
	for _, receive := range []string{"off", "on"} {
		t.Run("receive on start "+receive, func(t *testing.T) {
			t.Parallel()               // two apps of their own
			runs := fleetRuns(t, 6, 7) // two of each graph, one support_agent run waiting for approval
			a := startFunctionsApp(t, bin, 0, map[string]string{"FUNCGRAPH_RECEIVE_ON_START": receive}, nil)
			for _, r := range runs {
				status, b := a.do("POST", "/api/graphs/"+r.graph+"/runs", fmt.Sprintf(`{"input":%s,"instance_id":%q}`, r.input, r.id))
				if status != http.StatusAccepted {
					t.Fatalf("start %s: %d %s", r.id, status, b)
				}
				if r.event != "" {
					if status, b := a.do("POST", "/api/runs/"+r.id+"/events/approval", r.event); status != http.StatusAccepted {
						t.Fatalf("event %s: %d %s", r.id, status, b)
					}
				}
			}
			for _, r := range runs {
				status, out := a.wait(r.id, time.Minute)
				var got any
				_ = json.Unmarshal(out, &got)
				if status != string(engine.StatusCompleted) || !reflect.DeepEqual(got, r.wantOutput) {
					t.Errorf("run %s: %s %s, want Completed %v", r.id, status, out, r.wantOutput)
				}
				a.gapFree(r.id)
			}
			logs := a.logs.String()
			if !strings.Contains(logs, "embedded_dispatcher=false") || !strings.Contains(logs, "receive_on_start="+strconv.FormatBool(receive == "on")) {
				t.Errorf("the handler did not report running without its own dispatcher, receive on start %s:\n%s", receive, logs)
			}
			if strings.Contains(logs, "durable engine started") {
				t.Error("the handler ran an embedded dispatcher under the host")
			}
		})
	}
}

// buildSlowApp builds testdata/slowapp, a durable app whose node hangs on demand.
func buildSlowApp(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "slowapp")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/slowapp").CombinedOutput()
	if err != nil {
		t.Fatalf("build slowapp: %v\n%s", err, out)
	}
	return bin
}

// testQueues are host.json queue settings with test-sized back-offs.
func testQueues(maxDequeueCount int) map[string]any {
	return map[string]any{"messageEncoding": "base64", "maxPollingInterval": "00:00:00.5",
		"visibilityTimeout": "00:00:01", "maxDequeueCount": maxDequeueCount}
}

// TestIntegrationFunctions_TimeoutAndPoison: an invocation killed by functionTimeout loses
// nothing (the work item is redelivered to the restarted handler and the run completes with a
// gap-free history), and a work item that kills every invocation fails its run with a clear
// error once its step was started MaxStepStarts (5) times — counted on the run, so the fifth
// kill, which sends the message to the poison queue at maxDequeueCount (5), is settled by the
// fg_repair pass instead of looping or vanishing there.
func TestIntegrationFunctions_TimeoutAndPoison(t *testing.T) {
	t.Parallel() // slow, and independent of the package's other tests (its own app, storage prefix and ports)
	bin := buildSlowApp(t)
	dir := t.TempDir()
	// Every start's item goes to the trigger: a start's own handling (engine.Options.ReceiveOnStart)
	// is no invocation, so functionTimeout does not kill it (its own bound is tested in
	// pkg/engine). The timeout is one no other invocation (a status read, the repair pass)
	// reaches on a loaded machine, and far below the node's hang.
	a := startFunctionsAppWith(t, bin, functionsOptions{functionTimeout: 4 * time.Second,
		env: map[string]string{"SLOWAPP_DIR": dir, "FUNCGRAPH_RECEIVE_ON_START": "off"}, queues: testQueues(5)})
	a.repairEvery(time.Second)

	if status, b := a.do("POST", "/api/graphs/slow/runs", `{"input":{"hang_ms":30000,"marker":"once"},"instance_id":"once"}`); status != http.StatusAccepted {
		t.Fatalf("start: %d %s", status, b)
	}
	status, out := a.wait("once", 2*time.Minute)
	if status != string(engine.StatusCompleted) || !strings.Contains(string(out), `"done": true`) {
		t.Fatalf("timed-out run: %s %s, want Completed with done", status, out)
	}
	if a.e.Restarts() < 1 {
		t.Fatal("functionTimeout did not restart the handler: the test proved nothing")
	}
	a.gapFree("once")

	restarts := a.e.Restarts()
	if status, b := a.do("POST", "/api/graphs/slow/runs", `{"input":{"hang_ms":30000,"marker":""},"instance_id":"poison"}`); status != http.StatusAccepted {
		t.Fatalf("start: %d %s", status, b)
	}
	status, out = a.wait("poison", 6*time.Minute) // 45 s when the machine is quiet
	if status != string(engine.StatusFailed) || !strings.Contains(string(out), "was started 5 times without completing") {
		t.Fatalf("poison run: %s %s, want Failed after 5 starts", status, out)
	}
	// Every start was killed (at least 5 restarts), and the kills stop with the run (at most
	// two a start). Restarts past one a start depend on timing (7 and 8 were seen with the
	// machine loaded, 5 when it is quiet); the run's own count of its starts, in the failure
	// above, is the contract.
	if n := a.e.Restarts() - restarts; n < 5 || n > 10 {
		t.Errorf("poison run: %d handler restarts, want 5 to 10 (each start killed, and the kills end with the run)", n)
	}
	if !strings.Contains(a.logs.String(), "Moving message to queue") {
		t.Error("the fifth kill did not send the message to the poison queue: the repair pass was not tested")
	}
	t.Logf("handler restarts: %d", a.e.Restarts())
}
