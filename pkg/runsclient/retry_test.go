package runsclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// recorded is a fake app: each request is answered by the next of answers (the last one
// again when they run out), and recorded.
type recorded struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
	answers  []func(w http.ResponseWriter, r *http.Request)
}

func (f *recorded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := make([]byte, 1<<16)
	n, _ := r.Body.Read(body)
	f.mu.Lock()
	i := min(len(f.requests), len(f.answers)-1)
	f.requests = append(f.requests, r.Clone(context.Background()))
	f.bodies = append(f.bodies, string(body[:n]))
	answer := f.answers[i]
	f.mu.Unlock()
	answer(w, r)
}

func (f *recorded) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// answer writes status with headers (name/value pairs) and a JSON body.
func answer(status int, body string, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// dropConnection closes the connection without an answer: the reply is lost.
func dropConnection(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// fakeClient serves f and returns a client of it whose waits are recorded, not slept.
func fakeClient(t *testing.T, f http.Handler, retry runsclient.Retry) (*runsclient.Client, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := runsclient.New(srv.URL, runsclient.WithFunctionKey(testKey), runsclient.WithRetry(retry))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	runsclient.SetSleep(c, func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		return ctx.Err()
	})
	return c, waits
}

const busy = `{"error": "instance is busy, retry later"}`

func TestClient_Retry_HonoursRetryAfterAndKeepsTheIdempotencyKey(t *testing.T) {
	when := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		answer(503, busy, "Retry-After", "7"),
		answer(429, `{"error": "too many requests"}`, "Retry-After", when),
		answer(202, `{"instance_id": "r1", "event_name": "approval", "accepted": true}`),
	}}
	c, waits := fakeClient(t, f, runsclient.Retry{MaxDelay: 5 * time.Minute})
	if err := c.SendEvent(t.Context(), "r1", "approval", map[string]bool{"approved": true}, nil); err != nil {
		t.Fatal(err)
	}
	if f.count() != 3 || len(*waits) != 2 || (*waits)[0] != 7*time.Second || (*waits)[1] < 80*time.Second || (*waits)[1] > 90*time.Second {
		t.Fatalf("%d requests, waits %v: want 3, after 7s and the date's ~90s", f.count(), *waits)
	}
	keys := map[string]bool{}
	for i, r := range f.requests {
		keys[r.Header.Get("Idempotency-Key")] = true
		if r.Header.Get("x-functions-key") != testKey || r.URL.Path != "/api/runs/r1/events/approval" || f.bodies[i] != `{"approved":true}` {
			t.Fatalf("request %d: %s %s key %q body %s", i, r.Method, r.URL.Path, r.Header.Get("x-functions-key"), f.bodies[i])
		}
	}
	if len(keys) != 1 || keys[""] {
		t.Fatalf("idempotency keys %v: want one, the same on every attempt", keys)
	}
}

func TestClient_Retry_BoundedAttemptsEndBusy(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){answer(503, busy, "Retry-After", "3600")}}
	c, waits := fakeClient(t, f, runsclient.Retry{MaxAttempts: 3, MaxDelay: 5 * time.Second})
	_, err := c.StartRun(t.Context(), "g", nil, &runsclient.StartOptions{InstanceID: "x"})
	var apiErr *runsclient.Error
	if !errors.Is(err, runsclient.ErrBusy) || !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Hour || apiErr.Message != "instance is busy, retry later" {
		t.Fatalf("after the attempts: %v", err)
	}
	if f.count() != 3 || !slices.Equal(*waits, []time.Duration{5 * time.Second, 5 * time.Second}) {
		t.Fatalf("%d requests, waits %v: want 3 requests and two waits capped at MaxDelay", f.count(), *waits)
	}
}

func TestClient_Retry_BacksOffWithoutRetryAfter(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){answer(503, busy), answer(503, busy), answer(503, busy), answer(200, `{"runs": [], "continuation_token": null}`)}}
	c, waits := fakeClient(t, f, runsclient.Retry{BaseDelay: 100 * time.Millisecond})
	if _, err := c.List(t.Context(), runsclient.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*waits, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}) {
		t.Fatalf("waits %v: want doubling from BaseDelay", *waits)
	}
}

func TestClient_Retry_ContextCancelledDuringTheWait(t *testing.T) {
	arrived := make(chan struct{}, 1)
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		answer(503, busy, "Retry-After", "600")(w, r)
	}}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := runsclient.New(srv.URL) // the real wait
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived
		cancel()
	}()
	_, err = c.Status(ctx, "r1")
	if !errors.Is(err, context.Canceled) || f.count() != 1 {
		t.Fatalf("cancelled during the 600 s wait: %v after %d requests", err, f.count())
	}
}

func TestClient_LostReply_ReadsAreResentStartsAreNot(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){dropConnection,
		answer(200, `{"instance_id": "r1", "runtime_status": "Running", "custom_status": null, "input": {}, "output": null}`)}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	st, err := c.Status(t.Context(), "r1")
	if err != nil || st.RuntimeStatus != runsclient.StatusRunning || f.count() != 2 {
		t.Fatalf("a read whose reply was lost: %+v, %v after %d requests", st, err, f.count())
	}

	g := &recorded{answers: []func(http.ResponseWriter, *http.Request){dropConnection, answer(202, `{"id": "r2"}`)}}
	c, _ = fakeClient(t, g, runsclient.Retry{})
	_, err = c.StartRun(t.Context(), "g", nil, &runsclient.StartOptions{InstanceID: "r2"})
	var unknown *runsclient.UnknownOutcomeError
	if !errors.As(err, &unknown) || g.count() != 1 {
		t.Fatalf("a start whose reply was lost: %v after %d requests: want an unknown outcome, not sent again", err, g.count())
	}
}

func TestClient_Unreachable_IsNoUnknownOutcome(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	c, err := runsclient.New(srv.URL, runsclient.WithFunctionKey(testKey), runsclient.WithRetry(runsclient.Retry{MaxAttempts: 2}))
	if err != nil {
		t.Fatal(err)
	}
	runsclient.SetSleep(c, func(ctx context.Context, _ time.Duration) error { return ctx.Err() })
	_, err = c.StartRun(t.Context(), "g", nil, nil)
	var unknown *runsclient.UnknownOutcomeError
	if err == nil || errors.As(err, &unknown) || fmt.Sprint(err) == "" {
		t.Fatalf("a start that never connected: %v: want a plain error (nothing was sent)", err)
	}
}

func TestNew_RefusesBadBaseURLs(t *testing.T) {
	for _, bad := range []string{"", "localhost:7071", "ftp://x/api", "http://x/api?code=secret", "http://user:pw@x/api"} {
		if _, err := runsclient.New(bad); err == nil {
			t.Errorf("New(%q): want an error", bad)
		} else if s := err.Error(); strings.Contains(s, "secret") || strings.Contains(s, ":pw") {
			t.Errorf("New(%q): the error shows a secret: %v", bad, err)
		}
	}
	c, err := runsclient.New("http://127.0.0.1:7071")
	if err != nil || c.BaseURL() != "http://127.0.0.1:7071/api" {
		t.Fatalf("a base without a path: %v %v", c, err)
	}
}

func TestClient_PollForCompletion_WaitsTheStartsRetryAfter(t *testing.T) {
	running := `{"instance_id": "r1", "runtime_status": "Running", "custom_status": null, "input": {}, "output": null}`
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		answer(202, `{"id": "r1", "statusQueryGetUri": "http://x/api/runs/r1", "sendEventPostUri": "", "terminatePostUri": ""}`, "Retry-After", "10", "Location", "http://x/api/runs/r1"),
		answer(200, running), answer(200, running),
		answer(200, `{"instance_id": "r1", "runtime_status": "Failed", "custom_status": null, "input": {}, "output": "node 'classify' failed: model endpoint unreachable"}`),
	}}
	c, waits := fakeClient(t, f, runsclient.Retry{})
	started, err := c.StartRun(t.Context(), "g", nil, nil)
	if err != nil || started.RetryAfter != 10*time.Second {
		t.Fatalf("started %+v, %v", started, err)
	}
	st, err := c.PollForCompletion(t.Context(), started.ID, started.RetryAfter)
	if err != nil || st.RuntimeStatus != runsclient.StatusFailed || !slices.Equal(*waits, []time.Duration{10 * time.Second, 10 * time.Second}) {
		t.Fatalf("polled %+v, %v, waits %v", st, err, *waits)
	}
	if _, err := st.Result(); err == nil || !strings.Contains(err.Error(), "model endpoint unreachable") {
		t.Fatalf("Result of a Failed run: %v", err)
	}
}

func TestClient_GatewayErrors_RetriedForReadsOnly(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){answer(502, ""), answer(504, ""), answer(200, `{"runs": [], "continuation_token": null}`)}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	if _, err := c.List(t.Context(), runsclient.ListOptions{}); err != nil || f.count() != 3 {
		t.Fatalf("a read through failing gateways: %v after %d requests", err, f.count())
	}
	g := &recorded{answers: []func(http.ResponseWriter, *http.Request){answer(502, ""), answer(202, `{"id": "r"}`)}}
	c, _ = fakeClient(t, g, runsclient.Retry{})
	var apiErr *runsclient.Error
	if _, err := c.StartRun(t.Context(), "g", nil, nil); !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || g.count() != 1 {
		t.Fatalf("a start a gateway answered 502: %v after %d requests, want the 502, not sent again", err, g.count())
	}
}
