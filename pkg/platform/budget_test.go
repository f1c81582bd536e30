package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// fullOnValues is a thread store that refuses every Release carrying values as a full
// in-memory store does (threads.ErrStorageFull).
type fullOnValues struct{ *threads.Memory }

func (s fullOnValues) Release(ctx context.Context, id string, status threads.Status, values json.RawMessage, now time.Time) error {
	if values != nil {
		return fmt.Errorf("release thread %q: %w", id, threads.ErrStorageFull)
	}
	return s.Memory.Release(ctx, id, status, values, now)
}

// A run whose output the thread store has no room for still ends: the thread is released in
// error without the values, never left busy, and takes the next run.
func TestRuns_OutputPastTheStoreBudget_ThreadReleasedInError(t *testing.T) {
	app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(&plainGraph{}, "plain", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := Mount(app, Options{Threads: fullOnValues{threads.NewMemory()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		t.Run(tr.Name, func(t *testing.T) {
			tid := "full-" + tr.Name
			for i := range 2 {
				if r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/wait", `{"assistant_id":"plain","input":{"n":1},"if_not_exists":"create"}`); r.status != 200 {
					t.Fatalf("run %d: %d %s", i, r.status, r.body)
				}
				r := do(t, tr, "GET", "/api/threads/"+tid, "")
				var th struct {
					Status string          `json:"status"`
					Values json.RawMessage `json:"values"`
				}
				if err := json.Unmarshal([]byte(r.body), &th); err != nil || th.Status != "error" {
					t.Fatalf("thread after run %d: %d %s, want status error", i, r.status, r.body)
				}
			}
		})
	}
}

// countedBody is a request body that counts the reads of it.
type countedBody struct {
	r     io.Reader
	reads *atomic.Int32
}

func (b countedBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.r.Read(p)
}

// The routes that create a thread or a run refuse 507 in the platform's shape, before reading
// it, a body the memory budget (the hosting app's) has no room for; other routes, and a create
// that fits, are served.
func TestCreates_PastTheMemoryBudget_Refused507Unread(t *testing.T) {
	b, err := membudget.New(membudget.Limits{Total: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Grow(t.Context(), "", 6500); err != nil { // 500 bytes left for new work
		t.Fatal(err)
	}
	f := newFixture(t, host.Options{AuthLevel: funchost.AuthAnonymous, MemoryBudget: b}, nil)
	h := f.svc.app.FunctionApp().Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t)})
	send := func(path, body string) (int, string, int32) {
		var reads atomic.Int32
		r := httptest.NewRequest("POST", path, countedBody{strings.NewReader(body), &reads})
		r.ContentLength = int64(len(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String(), reads.Load()
	}
	if code, body, _ := send("/api/threads", `{"thread_id":"t1"}`); code != 200 {
		t.Fatalf("a thread that fits: %d %s", code, body)
	}
	big := `{"assistant_id":"plain","input":{"pad":"` + strings.Repeat("p", 600) + `"},"metadata":{"pad":"p"}}`
	for _, path := range []string{"/api/threads", "/api/threads/t1/runs", "/api/threads/t1/runs/wait",
		"/api/threads/t1/runs/stream", "/api/runs/wait", "/api/runs/stream"} {
		if code, body, reads := send(path, big); code != 507 || body != detail(apierror.StorageFullMessage) || reads != 0 {
			t.Fatalf("%s past the budget: %d %s, %d reads; want 507 unread", path, code, body, reads)
		}
	}
	if code, body, _ := send("/api/threads/search", `{"metadata":{"pad":"`+strings.Repeat("p", 600)+`"}}`); code != 200 {
		t.Fatalf("a search past the budget: %d %s, want 200 (it creates nothing)", code, body)
	}
	if code, body, _ := send("/api/threads/t1/runs/wait", `{"assistant_id":"plain","input":{}}`); code != 200 {
		t.Fatalf("a run that fits: %d %s", code, body)
	}
}
