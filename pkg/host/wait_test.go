package host

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// gates blocks graph runs by key until the test opens the key's gate.
type gates struct {
	mu sync.Mutex
	ch map[string]chan struct{} // guarded by mu
}

func newGates(t *testing.T) *gates {
	g := &gates{ch: map[string]chan struct{}{}}
	t.Cleanup(g.openAll) // runs before the app's cleanups: no run stays blocked
	return g
}

func (g *gates) gate(key string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.ch[key]
	if !ok {
		c = make(chan struct{})
		g.ch[key] = c
	}
	return c
}

func (g *gates) wait(key string) { <-g.gate(key) }

func (g *gates) open(key string) {
	c := g.gate(key)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

func (g *gates) openAll() {
	g.mu.Lock()
	keys := make([]string, 0, len(g.ch))
	for k := range g.ch {
		keys = append(keys, k)
	}
	g.mu.Unlock()
	for _, k := range keys {
		g.open(k)
	}
}

// gateOf returns the input's "gate" member.
func gateOf(req Request) string {
	var in struct {
		Gate string `json:"gate"`
	}
	_ = json.Unmarshal(req.Input, &in)
	return in.Gate
}

func TestOptions_MaxWait_BelowTheFrontEndCut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		wait time.Duration
		ok   bool
	}{{0, true}, {time.Second, true}, {funchost.FrontEndTimeout - time.Second, true}, {funchost.FrontEndTimeout, false}, {-time.Second, false}} {
		err := Options{MaxWait: c.wait}.Validate()
		if (err == nil) != c.ok {
			t.Errorf("MaxWait %v: Validate() = %v, want ok=%v", c.wait, err, c.ok)
		}
	}
	if got := (Options{}).withDefaults().MaxWait; got != DefaultMaxWait || got >= funchost.FrontEndTimeout {
		t.Errorf("default MaxWait = %v, want %v, below %v", got, DefaultMaxWait, funchost.FrontEndTimeout)
	}
}

// TestWait_PastTheBound_AnswersAndRunGoesOn_BothTransports: with a short MaxWait, an invoke
// whose graph is still running answers 504 and a stream answers the frames so far plus the
// wait-exceeded error frame; the run goes on holding the thread's lock (a second run on the
// thread is 409) until it ends, and the observer hears of its end.
func TestWait_PastTheBound_AnswersAndRunGoesOn_BothTransports(t *testing.T) {
	t.Parallel()
	const bound = 300 * time.Millisecond
	g := newGates(t)
	obs := &recordingObserver{}
	graph := &fakeGraph{fakeInvoker: fakeInvoker{checkpointer: true, invoke: func(_ context.Context, req Request) (any, error) {
		g.wait(gateOf(req))
		return map[string]any{"done": gateOf(req)}, nil
	}}, stream: func(_ context.Context, req Request, emit func(any) error) error {
		if err := emit(map[string]any{"step": 1}); err != nil {
			return err
		}
		g.wait(gateOf(req))
		return emit(map[string]any{"step": 2}) // dropped: nobody waits any more
	}}
	app := testApp(t, Options{MaxWait: bound, Observer: obs}, map[string]InvocableGraph{"slow": graph}, nil)
	wantDetail := "Graph run did not finish within 0.3 s; it goes on in the background"
	if got := apierror.WaitExceededMessage(bound); got != wantDetail {
		t.Fatalf("WaitExceededMessage = %q, want %q", got, wantDetail)
	}
	// Every request answers within answerWithin or fails the test at once: a reply sent early
	// that leaves its connection open would make the host send the next invocation on a
	// connection the still-running handler holds, and that request would hang.
	const answerWithin = 20 * time.Second
	hung := "the host's connection to the handler is still held by a run past its bound (the early reply must say Connection: close)"
	call := func(t *testing.T, tr funchosttest.Transport, method, path, body, key string) response {
		t.Helper()
		return callWithin(t, answerWithin, hung, tr, method, path, body, key)
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		t.Run(tr.Name+"/invoke", func(t *testing.T) {
			key, tid := tr.Name+"-invoke", tr.Name+"-t1"
			body := `{"input":{"gate":"` + key + `"},"config":{"configurable":{"thread_id":"` + tid + `"}}}`
			start := time.Now()
			got := call(t, tr, http.MethodPost, "/api/graphs/slow/invoke", body, tr.FunctionKey)
			if got.status != http.StatusGatewayTimeout || got.body != errBody(wantDetail) {
				t.Fatalf("got %d %s, want 504 %s", got.status, got.body, errBody(wantDetail))
			}
			if took := time.Since(start); took < bound || took > bound+5*time.Second {
				t.Fatalf("answered after %v, want about %v", took, bound)
			}
			other := `{"input":{"gate":"open"},"config":{"configurable":{"thread_id":"` + tid + `"}}}`
			if got := call(t, tr, http.MethodPost, "/api/graphs/slow/invoke", other, tr.FunctionKey); got.status != http.StatusConflict {
				t.Fatalf("second run on the busy thread: %d %s, want 409 (the first run goes on)", got.status, got.body)
			}
			g.open(key)
			g.open("open")
			funchosttest.Eventually(t, "the first run ends and frees its thread", func() bool {
				return call(t, tr, http.MethodPost, "/api/graphs/slow/invoke", other, tr.FunctionKey).status == http.StatusOK
			})
		})
		t.Run(tr.Name+"/stream", func(t *testing.T) {
			key := tr.Name + "-stream"
			body := `{"input":{"gate":"` + key + `"},"config":{"configurable":{"thread_id":"` + tr.Name + `-t2"}}}`
			got := call(t, tr, http.MethodPost, "/api/graphs/slow/stream", body, tr.FunctionKey)
			want := "event: data\ndata: {\"step\": 1}\n\n" +
				"event: error\ndata: {\"error\": \"graph run did not finish within 0.3 s; it goes on in the background\"}\n\n" +
				"event: end\ndata: {}\n\n"
			if got.status != http.StatusOK || got.body != want || !strings.HasPrefix(got.header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("got %d %q (%s), want 200 %q", got.status, got.body, got.header.Get("Content-Type"), want)
			}
			g.open(key)
		})
	}
	funchosttest.Eventually(t, "every run that passed the bound is observed completed", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		started, completed := 0, 0
		for _, c := range obs.calls {
			switch c.event {
			case "started":
				started++
			case "completed":
				completed++
			}
		}
		return started > 0 && started == completed
	})
}
