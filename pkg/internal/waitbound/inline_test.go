package waitbound

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// inlineFunc is an InlineWork of two funcs.
type inlineFunc struct {
	work    func(ctx context.Context)
	bounded func()
}

func (f inlineFunc) Work(ctx context.Context) { f.work(ctx) }
func (f inlineFunc) Bounded()                 { f.bounded() }

func TestRunInline_InTime(t *testing.T) {
	t.Parallel()
	var bounded atomic.Int32
	for range 3 { // a pooled call runs again
		var got int
		ok := RunInline(t.Context(), time.Minute, inlineFunc{
			work:    func(context.Context) { got = 42 },
			bounded: func() { bounded.Add(1) },
		})
		if !ok || got != 42 {
			t.Fatalf("RunInline = %v, work wrote %d; want true, 42", ok, got)
		}
	}
	if n := bounded.Load(); n != 0 {
		t.Fatalf("Bounded ran %d times for runs that ended in time", n)
	}
}

// TestRunInline_PastTheBound: Bounded answers while Work still runs, on another goroutine;
// from then on the request's end no longer cancels the run, and RunInline returns false
// once Work returned.
func TestRunInline_PastTheBound(t *testing.T) {
	t.Parallel()
	reqCtx, endRequest := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
	answered := make(chan struct{})
	var workErr error
	var value any
	var bounded atomic.Int32
	ok := RunInline(reqCtx, 20*time.Millisecond, inlineFunc{
		work: func(ctx context.Context) {
			value = ctx.Value(ctxKey{})
			<-answered   // Bounded runs while Work does: the test would hang otherwise
			endRequest() // the response was sent: the request's context ends
			time.Sleep(10 * time.Millisecond)
			workErr = ctx.Err()
		},
		bounded: func() {
			bounded.Add(1)
			close(answered)
		},
	})
	if ok {
		t.Fatal("RunInline = true, want false (the bound passed)")
	}
	if n := bounded.Load(); n != 1 {
		t.Fatalf("Bounded ran %d times, want 1", n)
	}
	if workErr != nil {
		t.Fatalf("the run's context ended with the request after the bound: %v", workErr)
	}
	if value != "v" {
		t.Fatalf("the run's context lost the request's values: %v", value)
	}
}

func TestRunInline_RequestEndCancelsWorkBeforeTheBound(t *testing.T) {
	t.Parallel()
	reqCtx, endRequest := context.WithCancel(t.Context())
	time.AfterFunc(10*time.Millisecond, endRequest)
	var err error
	ok := RunInline(reqCtx, time.Minute, inlineFunc{
		work: func(ctx context.Context) {
			<-ctx.Done()
			err = ctx.Err()
		},
		bounded: func() { t.Error("Bounded ran before the bound") },
	})
	if !ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("RunInline = %v, work's context %v; want true, canceled", ok, err)
	}
}

func TestRunInline_RunContextEndsWithTheRun(t *testing.T) {
	t.Parallel()
	var runCtx context.Context
	RunInline(context.Background(), 0, inlineFunc{work: func(ctx context.Context) { runCtx = ctx }})
	if runCtx.Err() == nil {
		t.Fatal("the run's context outlives the run")
	}
}

// noFlush is a ResponseWriter that cannot send before its handler returns.
type noFlush struct{ http.ResponseWriter }

// unwrapper wraps a writer the http.ResponseController way, without flushing itself.
type unwrapper struct{ w http.ResponseWriter }

func (u unwrapper) Header() http.Header         { return u.w.Header() }
func (u unwrapper) Write(p []byte) (int, error) { return u.w.Write(p) }
func (u unwrapper) WriteHeader(status int)      { u.w.WriteHeader(status) }
func (u unwrapper) Unwrap() http.ResponseWriter { return u.w }

// fakeReplier is an EarlyReplier that records its reply.
type fakeReplier struct {
	noFlush
	can, replied bool
}

func (r *fakeReplier) CanReplyEarly() bool                 { return r.can }
func (r *fakeReplier) ReplyEarly(int, http.Header, []byte) { r.replied = true }

func TestCanReplyEarly(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	for _, c := range []struct {
		name string
		w    http.ResponseWriter
		want bool
	}{
		{"flusher", rec, true},
		{"no flush", noFlush{rec}, false},
		{"unwraps to a flusher", unwrapper{rec}, true},
		{"unwraps to no flush", unwrapper{noFlush{rec}}, false},
		{"early replier that can", &fakeReplier{can: true}, true},
		{"early replier that cannot", &fakeReplier{}, false},
		{"unwraps to an early replier", unwrapper{&fakeReplier{can: true}}, true},
	} {
		if got := CanReplyEarly(c.w); got != c.want {
			t.Errorf("%s: CanReplyEarly = %v, want %v", c.name, got, c.want)
		}
	}
	r := &fakeReplier{can: true}
	ReplyEarly(unwrapper{r}, http.StatusGatewayTimeout, nil, nil)
	if !r.replied {
		t.Error("ReplyEarly did not reach the early replier it unwraps to")
	}
}

// TestReplyEarly_ClientHasTheWholeAnswerWhileTheHandlerRuns: over a real connection, the
// client reads the complete answer (status, headers, body to its end) while the handler is
// still running, and is told not to reuse the connection.
func TestReplyEarly_ClientHasTheWholeAnswerWhileTheHandlerRuns(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		ReplyEarly(w, http.StatusGatewayTimeout, http.Header{"Content-Type": {"application/json"}}, []byte(`{"error":"error"}`))
		<-release
	}))
	defer srv.Close()
	defer close(release) // before srv.Close: the handler must return for the server to close
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer while the handler runs: %v", err)
	}
	if resp.StatusCode != http.StatusGatewayTimeout || string(body) != `{"error":"error"}` ||
		resp.Header.Get("Content-Type") != "application/json" || !resp.Close {
		t.Fatalf("got %d %q (%v), close %v; want 504 with the body, its type, and the connection closed",
			resp.StatusCode, body, resp.Header, resp.Close)
	}
}
