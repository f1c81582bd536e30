package host

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// budgetApp serves, with isolation on (the identity header believed from 192.0.2.0/24, where
// httptest requests come from), a checkpointed graph "big" whose every thread's state and every
// invoke's output are about 1 MB, and a stream of about 1 MB, on a response budget of 4 MiB per
// identity. It returns the in-memory standalone handler and the count of runs.
func budgetApp(t *testing.T, budget *respbudget.Budget) (http.Handler, *atomic.Int64) {
	t.Helper()
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 1_000_000)
	var runs atomic.Int64
	g := &fakeGraph{
		fakeInvoker: fakeInvoker{checkpointer: true, invoke: func(context.Context, Request) (any, error) {
			runs.Add(1)
			return map[string]any{"text": big}, nil
		}},
		stream: func(_ context.Context, _ Request, emit func(any) error) error {
			runs.Add(1)
			return emit(map[string]any{"text": big[:900_000]})
		},
		state: func(context.Context, string) (StateView, error) {
			return StateView{Values: map[string]any{"text": big}}, nil
		},
	}
	a := testApp(t, Options{Isolation: iso, ResponseBudget: budget, MaxStreamResponseBytes: 2 << 20},
		map[string]InvocableGraph{"big": g}, nil)
	a.SetIsolation(iso, &mapOwners{owners: map[string]any{"t-alice": "alice", "t-bob": "bob"}})
	return a.FunctionApp().Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t),
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}}), &runs
}

// hostRequest is a request of who's to the in-memory app.
func hostRequest(who, method, path, body string) *http.Request {
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("x-functions-key", "k")
	r.Header.Set(isolation.PrincipalIDHeader, who)
	return r
}

// checkRefused fails unless w was answered 429 with Retry-After and the hosting shape's
// message of the identity's bound.
func checkRefused(t *testing.T, what string, w *funchosttest.StalledWriter) {
	t.Helper()
	if w == nil {
		t.Fatalf("%s: every unread answer held, want a 429 past the identity's bound", what)
	}
	code, body := w.Result()
	want := errBody(respbudget.IdentityBytesMessage)
	if code != http.StatusTooManyRequests || body != want || w.Header().Get("Retry-After") != respbudget.RetryAfter {
		t.Fatalf("%s past the identity's bound: %d %s (Retry-After %q), want 429 %s", what, code, body, w.Header().Get("Retry-After"), want)
	}
}

func smallBudget() *respbudget.Budget {
	return respbudget.New(respbudget.Limits{BytesPerIdentity: 4 << 20, BytesTotal: 64 << 20})
}

// TestState_SlowReaders_BoundedPerIdentity: alice asks her 1 MB thread state again and again
// and reads none of the answers. Once what they hold reaches her bound her next request is
// answered 429 before the state is read, while bob's state is served whole; once her clients
// read, she is served again.
func TestState_SlowReaders_BoundedPerIdentity(t *testing.T) {
	h, _ := budgetApp(t, smallBudget())
	get := func(w http.ResponseWriter, who string) {
		h.ServeHTTP(w, hostRequest(who, "GET", "/api/graphs/big/threads/t-"+who+"/state", ""))
	}
	held, refused, release := funchosttest.SlowReaders(t, 50, func(w http.ResponseWriter) { get(w, "alice") })
	checkRefused(t, "alice's state", refused)
	if held > 4 {
		t.Fatalf("alice holds %d unread states of 1 MB, past her bound of 4 MiB", held)
	}
	bob := httptest.NewRecorder()
	get(bob, "bob")
	if bob.Code != http.StatusOK || bob.Body.Len() < 1_000_000 {
		t.Fatalf("bob while alice holds her bound: %d, %d bytes; want 200 with his state", bob.Code, bob.Body.Len())
	}
	release()
	again := httptest.NewRecorder()
	get(again, "alice")
	if again.Code != http.StatusOK {
		t.Fatalf("alice once her answers were read: %d %s", again.Code, again.Body.String())
	}
}

// TestInvokeStream_SlowReaders_RefusedBeforeTheRun: alice's unread 1 MB invoke answers fill her
// bound; her next invoke and her next stream are answered 429 before their graphs run, while
// bob's invoke runs and is answered.
func TestInvokeStream_SlowReaders_RefusedBeforeTheRun(t *testing.T) {
	h, runs := budgetApp(t, smallBudget())
	body := `{"input": {}, "config": {"configurable": {"thread_id": "t-alice"}}}`
	held, refused, _ := funchosttest.SlowReaders(t, 50, func(w http.ResponseWriter) {
		h.ServeHTTP(w, hostRequest("alice", "POST", "/api/graphs/big/invoke", body))
	})
	checkRefused(t, "alice's invoke", refused)
	if got := runs.Load(); got != int64(held) {
		t.Fatalf("%d runs for %d answered invokes: the refused one ran", got, held)
	}
	stream := httptest.NewRecorder()
	h.ServeHTTP(stream, hostRequest("alice", "POST", "/api/graphs/big/stream", body))
	if stream.Code != http.StatusTooManyRequests || runs.Load() != int64(held) {
		t.Fatalf("alice's stream past her bound: %d %s after %d runs, want 429 before the run", stream.Code, stream.Body.String(), runs.Load())
	}
	bob := httptest.NewRecorder()
	h.ServeHTTP(bob, hostRequest("bob", "POST", "/api/graphs/big/invoke", strings.ReplaceAll(body, "t-alice", "t-bob")))
	if bob.Code != http.StatusOK || bob.Body.Len() < 1_000_000 {
		t.Fatalf("bob while alice holds her bound: %d, %d bytes", bob.Code, bob.Body.Len())
	}
}

// TestStream_Streams_BoundedPerIdentity: alice's streams count among her open event streams:
// past her bound (2 here) the next is refused 429 before it runs, bob's still runs.
func TestStream_Streams_BoundedPerIdentity(t *testing.T) {
	h, runs := budgetApp(t, respbudget.New(respbudget.Limits{StreamsPerIdentity: 2}))
	body := `{"input": {}, "config": {"configurable": {"thread_id": "t-alice"}}}`
	held, refused, _ := funchosttest.SlowReaders(t, 10, func(w http.ResponseWriter) {
		h.ServeHTTP(w, hostRequest("alice", "POST", "/api/graphs/big/stream", body))
	})
	if held != 2 || refused == nil {
		t.Fatalf("alice held %d streams (refused: %v), want 2 and a refusal", held, refused != nil)
	}
	if code, b := refused.Result(); code != http.StatusTooManyRequests || b != errBody(respbudget.IdentityStreamsMessage) {
		t.Fatalf("alice's third stream: %d %s", code, b)
	}
	if runs.Load() != 2 {
		t.Fatalf("%d runs, want 2: the refused stream ran", runs.Load())
	}
	bob := httptest.NewRecorder()
	h.ServeHTTP(bob, hostRequest("bob", "POST", "/api/graphs/big/stream", strings.ReplaceAll(body, "t-alice", "t-bob")))
	if bob.Code != http.StatusOK {
		t.Fatalf("bob's stream while alice holds hers: %d %s", bob.Code, bob.Body.String())
	}
}
