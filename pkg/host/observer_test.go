package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

func TestObserver_RunContext_CarriesRunFields(t *testing.T) {
	obs := &recordingObserver{}
	app := testApp(t, Options{Observer: obs}, map[string]InvocableGraph{"g": &fakeGraph{fakeInvoker: fakeInvoker{checkpointer: true}}}, nil)
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		for _, endpoint := range []string{EndpointInvoke, EndpointStream} {
			obs.reset()
			body := `{"input":{"secret":"input"},"config":{"configurable":{"thread_id":"t9"}},"stream_mode":"updates"}`
			if got := call(t, tr, "POST", "/api/graphs/g/"+endpoint, body, tr.FunctionKey); got.status != 200 {
				t.Fatalf("%s %s: %d", tr.Name, endpoint, got.status)
			}
			obs.mu.Lock()
			calls := append([]observed(nil), obs.calls...)
			obs.mu.Unlock()
			if len(calls) != 2 || calls[0].event != "started" || calls[1].event != "completed" {
				t.Fatalf("calls = %+v", calls)
			}
			start, end := calls[0].rc, calls[1].rc
			if !hex32.MatchString(start.RunID) || seen[start.RunID] || end.RunID != start.RunID {
				t.Fatalf("run ids %q/%q", start.RunID, end.RunID)
			}
			seen[start.RunID] = true
			wantMode := ""
			if endpoint == EndpointStream {
				wantMode = "updates"
			}
			if start.GraphName != "g" || start.Endpoint != endpoint || start.ThreadID != "t9" || start.StreamMode != wantMode ||
				start.Transport != transportBuffered || !start.HasCheckpointer || start.LockBackend != "InProcessThreadLock" ||
				start.InvocationID == "" || start.TriggerType != "" || start.EndedAtNS != 0 {
				t.Fatalf("started context = %+v", start)
			}
			if end.EndedAtNS < end.StartedAtNS || end.Duration() < 0 {
				t.Fatalf("completed context times = %d..%d", end.StartedAtNS, end.EndedAtNS)
			}
		}
	}
}

// panickyObserver panics in every hook.
type panickyObserver struct{}

func (panickyObserver) OnRunStarted(context.Context, RunContext)                { panic("observer") }
func (panickyObserver) OnRunCompleted(context.Context, RunContext)              { panic("observer") }
func (panickyObserver) OnRunFailed(context.Context, RunContext, error)          { panic("observer") }
func (panickyObserver) OnRunRejected(context.Context, RunContext, RejectReason) { panic("observer") }

func TestObserver_Panics_DoNotChangeOutcome(t *testing.T) {
	app := testApp(t, Options{Observer: panickyObserver{}}, map[string]InvocableGraph{
		"ok":   &fakeInvoker{checkpointer: true},
		"fail": &fakeInvoker{checkpointer: true, invoke: func(context.Context, Request) (any, error) { return nil, errors.New("x") }},
	}, nil)
	tests := []struct {
		graph, body string
		status      int
	}{
		{"ok", invokeBody("t1"), 200},
		{"ok", invokeBody("t1"), 200}, // the lock was released despite the panics
		{"fail", invokeBody("t1"), 500},
		{"ok", `{"input":1}`, 422},
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		for _, tt := range tests {
			if got := call(t, tr, "POST", "/api/graphs/"+tt.graph+"/invoke", tt.body, tr.FunctionKey); got.status != tt.status {
				t.Fatalf("%s %s: %d, want %d", tr.Name, tt.graph, got.status, tt.status)
			}
		}
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) records(t *testing.T) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestLoggingObserver_Records_NamesLevelsAndFields(t *testing.T) {
	sink := &syncBuffer{}
	obs := NewLoggingObserver(slog.New(slog.NewJSONHandler(sink, nil)))
	app := testApp(t, Options{Observer: obs}, map[string]InvocableGraph{
		"ok":   &fakeInvoker{},
		"fail": &fakeInvoker{invoke: func(context.Context, Request) (any, error) { return nil, errors.New("secret text") }},
	}, nil)
	tr := funchosttest.Transports(t, app.FunctionApp())[0]
	call(t, tr, "POST", "/api/graphs/ok/invoke", `{"input":{"secret":"input"}}`, tr.FunctionKey)
	call(t, tr, "POST", "/api/graphs/fail/invoke", `{"input":{}}`, tr.FunctionKey)
	call(t, tr, "POST", "/api/graphs/ok/invoke", `{"input":[]}`, tr.FunctionKey)
	recs := sink.records(t)
	want := []struct{ msg, level, status string }{
		{logRunStarted, "INFO", "started"}, {logRunCompleted, "INFO", "completed"},
		{logRunStarted, "INFO", "started"}, {logRunFailed, "ERROR", "failed"},
		{logRunRejected, "INFO", "rejected"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records: %v", len(recs), recs)
	}
	for i, w := range want {
		r := recs[i]
		if r["msg"] != w.msg || r["level"] != w.level || r["status"] != w.status {
			t.Fatalf("record %d = %v, want %+v", i, r, w)
		}
		for _, k := range []string{"graph_name", "endpoint", "run_id", "thread_id", "started_at_ns", "ended_at_ns", "assistant_id",
			"invocation_id", "stream_mode", "transport", "has_checkpointer", "lock_backend", "trigger_type", "duration_ms"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("record %d lacks %s: %v", i, k, r)
			}
		}
	}
	if recs[3]["error_type"] != "*errors.errorString" || recs[4]["reason"] != "invalid_request" {
		t.Fatalf("failed/rejected extras: %v / %v", recs[3], recs[4])
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if strings.Contains(sink.buf.String(), "secret") {
		t.Fatalf("observer logged input or error text: %s", sink.buf.String())
	}
}
