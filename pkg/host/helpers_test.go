package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// fakeInvoker is an invoke-only graph made of func fields.
type fakeInvoker struct {
	invoke       func(ctx context.Context, req Request) (any, error)
	checkpointer bool
	version      bool
}

func (g *fakeInvoker) Invoke(ctx context.Context, req Request) (any, error) {
	if g.invoke == nil {
		return json.RawMessage(req.Input), nil
	}
	return g.invoke(ctx, req)
}
func (g *fakeInvoker) HasCheckpointer() bool { return g.checkpointer }
func (g *fakeInvoker) AcceptsVersion() bool  { return g.version }

// fakeGraph adds streaming and state to fakeInvoker.
type fakeGraph struct {
	fakeInvoker
	stream func(ctx context.Context, req Request, emit func(any) error) error
	state  func(ctx context.Context, threadID string) (StateView, error)
}

func (g *fakeGraph) Stream(ctx context.Context, req Request, emit func(any) error) error {
	if g.stream == nil {
		return emit(json.RawMessage(req.Input))
	}
	return g.stream(ctx, req, emit)
}

func (g *fakeGraph) GetState(ctx context.Context, threadID string) (StateView, error) {
	if g.state == nil {
		return StateView{}, ErrThreadNotFound
	}
	return g.state(ctx, threadID)
}

// recordingObserver records observer calls as "started", "completed", "failed:<type>",
// "rejected:<reason>", per run id.
type recordingObserver struct {
	mu    sync.Mutex
	calls []observed
}

type observed struct {
	event string
	rc    RunContext
}

func (o *recordingObserver) add(event string, rc RunContext) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, observed{event, rc})
}

func (o *recordingObserver) OnRunStarted(_ context.Context, rc RunContext)   { o.add("started", rc) }
func (o *recordingObserver) OnRunCompleted(_ context.Context, rc RunContext) { o.add("completed", rc) }
func (o *recordingObserver) OnRunFailed(_ context.Context, rc RunContext, err error) {
	o.add("failed", rc)
}
func (o *recordingObserver) OnRunRejected(_ context.Context, rc RunContext, reason RejectReason) {
	o.add("rejected:"+string(reason), rc)
}

// events returns the recorded event names of each run id, in first-seen order of runs.
func (o *recordingObserver) events() [][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var order []string
	byRun := map[string][]string{}
	for _, c := range o.calls {
		if _, ok := byRun[c.rc.RunID]; !ok {
			order = append(order, c.rc.RunID)
		}
		byRun[c.rc.RunID] = append(byRun[c.rc.RunID], c.event)
	}
	out := make([][]string, 0, len(order))
	for _, id := range order {
		out = append(out, byRun[id])
	}
	return out
}

func (o *recordingObserver) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = nil
}

// testApp builds an app with opts (logging through t) and registers graphs by name.
func testApp(t *testing.T, opts Options, graphs map[string]InvocableGraph, regOpts map[string]RegisterOptions) *GraphHostApp {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = funchosttest.TestLogger(t)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(graphs)) {
		if err := a.Register(graphs[name], name, regOpts[name]); err != nil {
			t.Fatalf("Register(%s): %v", name, err)
		}
	}
	return a
}

// response is what a test request got back.
type response struct {
	status int
	header http.Header
	body   string
}

// call sends a request through a transport; key "" sends no key.
func call(t testing.TB, tr funchosttest.Transport, method, path, body, key string) response {
	t.Helper()
	return callHeaders(t, tr, method, path, body, key)
}

// callHeaders is call with more headers, as name/value pairs.
func callHeaders(t testing.TB, tr funchosttest.Transport, method, path, body, key string, headers ...string) response {
	t.Helper()
	return callCtx(context.Background(), t, tr, method, path, body, key, headers...)
}

// callWithin is call with a deadline: a request still unanswered after d fails the test
// with why, at once, instead of hanging the package until its timeout.
func callWithin(t testing.TB, d time.Duration, why string, tr funchosttest.Transport, method, path, body, key string) response {
	t.Helper()
	ctx, cancel := context.WithTimeoutCause(context.Background(), d, fmt.Errorf("no answer within %v: %s", d, why))
	defer cancel()
	return callCtx(ctx, t, tr, method, path, body, key)
}

// callCtx is callHeaders under ctx; a request that ctx ends fails the test with its cause.
func callCtx(ctx context.Context, t testing.TB, tr funchosttest.Transport, method, path, body, key string, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, tr.BaseURL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("x-functions-key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, withCause(ctx, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", withCause(ctx, err))
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// withCause returns err, naming ctx's cause when ctx ended and err does not say so.
func withCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !strings.Contains(err.Error(), cause.Error()) {
		return fmt.Errorf("%w (%v)", err, cause)
	}
	return err
}

// errBody is the compact native error body with detail.
func errBody(detail string) string {
	b, _ := marshalCompact(struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}{"error", detail})
	return string(b)
}

// isJSONType reports an application/json Content-Type. Through the Functions host a JSON-mode
// string body goes through its string formatter, which appends "; charset=utf-8".
func isJSONType(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json" && (len(params) == 0 || params["charset"] == "utf-8")
}
