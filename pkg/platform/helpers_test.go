package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// memGraph is a checkpointed chat graph keeping a history of states per thread, with every
// platform capability. Func fields override behaviour.
type memGraph struct {
	mu      sync.Mutex
	history map[string][]host.StateView // newest first; guarded by mu
	seq     int                         // guarded by mu

	invoke func(ctx context.Context, req host.Request) (any, error)
	stream func(ctx context.Context, req host.Request, emit func(any) error) error
}

func newMemGraph() *memGraph { return &memGraph{history: map[string][]host.StateView{}} }

func (g *memGraph) HasCheckpointer() bool { return true }

func (g *memGraph) save(tid string, values map[string]any, source string) CheckpointRef {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	id := "cp" + string(rune('a'+g.seq))
	view := host.StateView{Values: values, Metadata: map[string]any{"source": source, "step": g.seq},
		Config:    map[string]any{"configurable": map[string]any{"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": id}},
		CreatedAt: time.Date(2025, 1, 1, 0, 0, g.seq, 0, time.UTC)}
	if prev := g.history[tid]; len(prev) > 0 {
		view.ParentConfig = prev[0].Config
	}
	g.history[tid] = append([]host.StateView{view}, g.history[tid]...)
	return CheckpointRef{ThreadID: tid, ID: id}
}

func (g *memGraph) Invoke(ctx context.Context, req host.Request) (any, error) {
	if g.invoke != nil {
		return g.invoke(ctx, req)
	}
	var in map[string]any
	_ = json.Unmarshal(req.Input, &in)
	out := map[string]any{"echo": in, "thread": req.Config.ThreadID, "context": RunContext(ctx)}
	if req.Config.ThreadID != "" {
		g.save(req.Config.ThreadID, out, "loop")
	}
	return out, nil
}

func (g *memGraph) Stream(ctx context.Context, req host.Request, emit func(any) error) error {
	if g.stream != nil {
		return g.stream(ctx, req, emit)
	}
	for _, c := range []any{map[string]any{"n": 1, "mode": req.StreamMode}, "two", []int{3}} {
		if err := emit(c); err != nil {
			return err
		}
	}
	return nil
}

func (g *memGraph) GetState(_ context.Context, tid string) (host.StateView, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.history[tid]
	if len(h) == 0 {
		return host.StateView{}, host.ErrThreadNotFound
	}
	return h[0], nil
}

func (g *memGraph) GetStateHistory(_ context.Context, ref CheckpointRef) ([]host.StateView, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.history[ref.ThreadID]
	if len(h) == 0 {
		return nil, host.ErrThreadNotFound
	}
	for ref.ID != "" && len(h) > 0 && h[0].Config["configurable"].(map[string]any)["checkpoint_id"] != ref.ID {
		h = h[1:]
	}
	return append([]host.StateView(nil), h...), nil
}

func (g *memGraph) UpdateState(_ context.Context, tid string, u StateUpdate) (CheckpointRef, error) {
	var v map[string]any
	_ = json.Unmarshal(u.Values, &v)
	if v["fail"] == "notfound" {
		return CheckpointRef{}, fmt.Errorf("no checkpoint x: %w", host.ErrThreadNotFound)
	}
	return g.save(tid, v, "update:"+u.AsNode), nil
}

func (g *memGraph) DeleteThread(_ context.Context, tid string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.history, tid)
	return nil
}

// plainGraph is an invoke-only graph without checkpointer.
type plainGraph struct {
	checkpointer bool
}

func (g *plainGraph) Invoke(_ context.Context, req host.Request) (any, error) {
	if strings.Contains(string(req.Input), "scalar") {
		return 42, nil
	}
	return json.RawMessage(req.Input), nil
}
func (g *plainGraph) HasCheckpointer() bool { return g.checkpointer }

// fixture is a mounted platform service and its transports.
type fixture struct {
	svc   *Service
	store *threads.Memory
	chat  *memGraph
	trs   []funchosttest.Transport
}

func newFixture(t *testing.T, opts host.Options, configure func(*memGraph)) *fixture {
	t.Helper()
	opts.PlatformCompat = true
	opts.Logger = funchosttest.TestLogger(t)
	app, err := host.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	chat := newMemGraph()
	if configure != nil {
		configure(chat)
	}
	for _, ng := range []struct {
		name string
		g    host.InvocableGraph
	}{{"chat", chat}, {"locked", &plainGraph{checkpointer: true}}, {"plain", &plainGraph{}}} {
		if err := app.Register(ng.g, ng.name, host.RegisterOptions{Description: "the " + ng.name + " graph"}); err != nil {
			t.Fatal(err)
		}
	}
	store := threads.NewMemory()
	svc, err := Mount(app, Options{Threads: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return &fixture{svc: svc, store: store, chat: chat, trs: funchosttest.Transports(t, app.FunctionApp())}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func do(t testing.TB, tr funchosttest.Transport, method, path, body string) resp {
	t.Helper()
	return doHeaders(t, tr, method, path, body, "x-functions-key", tr.FunctionKey)
}

// doHeaders is do with the request headers given as name/value pairs (no key unless given).
func doHeaders(t testing.TB, tr funchosttest.Transport, method, path, body string, headers ...string) resp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, tr.BaseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, r.Header, string(b)}
}

func detail(msg string) string {
	b, _ := pyjson.Marshal(map[string]string{"detail": msg})
	return string(b)
}

// newThread creates a thread through the API and returns its id.
func newThread(t *testing.T, tr funchosttest.Transport, body string) string {
	t.Helper()
	r := do(t, tr, "POST", "/api/threads", body)
	if r.status != 200 {
		t.Fatalf("create thread: %d %s", r.status, r.body)
	}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal([]byte(r.body), &th); err != nil {
		t.Fatal(err)
	}
	return th.ThreadID
}
