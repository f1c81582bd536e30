package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/hosttest"
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
	app, err := host.New(host.Options{PlatformCompat: true, Logger: hosttest.TestLogger(t)})
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
	for _, tr := range hosttest.Transports(t, app.FunctionApp()) {
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
