package platform

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// budgetFixture serves the graph "chat" and the platform routes in memory with isolation on
// (the identity header believed from 192.0.2.0/24, where httptest requests come from) on
// budget. Threads t-alice and t-bob, each bound to chat and owned by its identity, hold a
// history of five states of about 300 kB each (the newest is the state). A stream run whose
// input is {"block": true} tells entered, then waits until release is called.
func budgetFixture(t *testing.T, budget *respbudget.Budget) (h http.Handler, entered chan struct{}, release func()) {
	t.Helper()
	iso, err := isolation.New(isolation.Config{IdentityHeader: isolation.PrincipalIDHeader,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	if err != nil {
		t.Fatal(err)
	}
	app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t), ResponseBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	released, entered := make(chan struct{}), make(chan struct{}, 16)
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	t.Cleanup(release)
	chat := newMemGraph()
	chat.stream = func(ctx context.Context, req host.Request, emit func(any) error) error {
		if strings.Contains(string(req.Input), "block") {
			entered <- struct{}{}
			select {
			case <-released:
			case <-ctx.Done():
			}
		}
		return emit(map[string]any{"n": 1})
	}
	if err := app.Register(chat, "chat", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	store := threads.NewMemory()
	svc, err := Mount(app, Options{Threads: store, Isolation: iso})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	big := strings.Repeat("x", 300_000)
	for _, who := range []string{"alice", "bob"} {
		tid := "t-" + who
		if err := store.Create(t.Context(), threads.Thread{ThreadID: tid, CreatedAt: time.Now(), UpdatedAt: time.Now(),
			Metadata: map[string]any{isolation.OwnerKey: who}, Status: threads.StatusIdle, AssistantID: "chat"}); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			chat.save(tid, map[string]any{"text": big}, "loop")
		}
	}
	return app.FunctionApp().Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t),
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}}), entered, release
}

// asUser is a request of who's to the in-memory app.
func asUser(who, method, path, body string) *http.Request {
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

// refusedAs fails unless w was answered 429 with Retry-After and the platform shape of msg.
func refusedAs(t *testing.T, what string, w *funchosttest.StalledWriter, msg string) {
	t.Helper()
	if w == nil {
		t.Fatalf("%s: every unread answer held, want a 429 past the identity's bound", what)
	}
	code, body := w.Result()
	if code != http.StatusTooManyRequests || body != detail(msg) || w.Header().Get("Retry-After") != respbudget.RetryAfter {
		t.Fatalf("%s: %d %s (Retry-After %q), want 429 %s", what, code, body, w.Header().Get("Retry-After"), detail(msg))
	}
}

// Alice asks her thread's state, then its history, again and again and reads none of the
// answers. Once they hold her bound her next request is answered 429 before anything is
// loaded, while bob's is served whole; once her clients read she is served again.
func TestPlatformReads_SlowReaders_BoundedPerIdentity(t *testing.T) {
	for _, tc := range []struct {
		name, method, path, body string
		min                      int // bytes of a whole answer
	}{
		{"state", "GET", "/api/threads/t-%s/state", "", 300_000},
		{"history", "POST", "/api/threads/t-%s/history", `{"limit": 5}`, 1_500_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, _ := budgetFixture(t, respbudget.New(respbudget.Limits{BytesPerIdentity: 4 << 20}))
			serve := func(w http.ResponseWriter, who string) {
				h.ServeHTTP(w, asUser(who, tc.method, strings.Replace(tc.path, "%s", who, 1), tc.body))
			}
			held, refused, release := funchosttest.SlowReaders(t, 50, func(w http.ResponseWriter) { serve(w, "alice") })
			refusedAs(t, "alice's "+tc.name+" past her bound", refused, respbudget.IdentityBytesMessage)
			if int64(held*tc.min) > 5<<20 {
				t.Fatalf("alice holds %d unread answers of %d bytes, past her bound of 4 MiB", held, tc.min)
			}
			bob := httptest.NewRecorder()
			serve(bob, "bob")
			if bob.Code != http.StatusOK || bob.Body.Len() < tc.min || !json.Valid(bob.Body.Bytes()) {
				t.Fatalf("bob while alice holds her bound: %d, %d bytes (valid JSON: %v)", bob.Code, bob.Body.Len(), json.Valid(bob.Body.Bytes()))
			}
			release()
			again := httptest.NewRecorder()
			serve(again, "alice")
			if again.Code != http.StatusOK {
				t.Fatalf("alice once her answers were read: %d %s", again.Code, again.Body.String())
			}
		})
	}
}

// TestPlatformHistory_WrittenStateByState: the page written state by state is the page
// encoded whole.
func TestPlatformHistory_WrittenStateByState(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	tr := f.trs[0]
	tid := newThread(t, tr, `{}`)
	for _, in := range []string{"a", "b", "c"} {
		if r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/wait", `{"assistant_id": "chat", "input": {"q": "`+in+`"}}`); r.status != 200 {
			t.Fatalf("run: %d %s", r.status, r.body)
		}
	}
	views, err := f.chat.GetStateHistory(t.Context(), CheckpointRef{ThreadID: tid})
	if err != nil {
		t.Fatal(err)
	}
	states, err := filterHistory(views, tid, "", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(states)
	for _, body := range []string{`{}`, `{"limit": 1}`, `{"metadata": {"source": "none"}}`} {
		r := do(t, tr, "POST", "/api/threads/"+tid+"/history", body)
		var got, whole []any
		if r.status != 200 || json.Unmarshal([]byte(r.body), &got) != nil {
			t.Fatalf("history %s: %d %s", body, r.status, r.body)
		}
		_ = json.Unmarshal(want, &whole)
		switch body {
		case `{"limit": 1}`:
			whole = whole[:1]
		case `{"metadata": {"source": "none"}}`:
			whole = []any{}
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(whole)
		if string(g) != string(w) {
			t.Fatalf("history %s:\n got %s\nwant %s", body, g, w)
		}
	}
}

// TestPlatformStreams_BoundedPerIdentity: alice's runs/stream requests are open event streams:
// past her bound (2 here) the next is answered 429 before its run starts, while bob's runs.
func TestPlatformStreams_BoundedPerIdentity(t *testing.T) {
	h, entered, release := budgetFixture(t, respbudget.New(respbudget.Limits{StreamsPerIdentity: 2}))
	stream := func(who, input string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, asUser(who, "POST", "/api/runs/stream", `{"assistant_id": "chat", "input": `+input+`}`))
		return w
	}
	var wg sync.WaitGroup
	for range 2 { // alice's two streams wait on release, holding their streams open
		wg.Go(func() { stream("alice", `{"block": true}`) })
	}
	t.Cleanup(func() { release(); wg.Wait() })
	<-entered
	<-entered
	third := stream("alice", `{}`)
	if third.Code != http.StatusTooManyRequests || third.Body.String() != detail(respbudget.IdentityStreamsMessage) {
		t.Fatalf("alice's third stream: %d %s, want 429 %s", third.Code, third.Body.String(), detail(respbudget.IdentityStreamsMessage))
	}
	if bob := stream("bob", `{}`); bob.Code != http.StatusOK || !strings.Contains(bob.Body.String(), "event: end") {
		t.Fatalf("bob's stream while alice holds hers: %d %s", bob.Code, bob.Body.String())
	}
	release()
}
