package platform

import (
	"context"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// queuedBackend is a run backend with a run queued on every thread that has not started yet:
// the thread record still says idle.
type queuedBackend struct{ RunBackend }

func (queuedBackend) Active(context.Context, string) (bool, error) { return true, nil }

// reject refuses a run while another run of the thread is queued but not yet started, though
// the thread itself is still idle: the backend's Active decides, not only the thread status.
func TestBackgroundRuns_RejectWhileAnotherRunIsQueued(t *testing.T) {
	f := newFixture(t, host.Options{}, nil)
	f.svc.runs = queuedBackend{f.svc.runs}
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			r := do(t, tr, "POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"chat","input":{"n":1}}`)
			want := detail("Thread '" + tid + "' is already busy. Concurrent runs are not supported (multitask_strategy=reject).")
			if r.status != 409 || r.body != want {
				t.Fatalf("reject with a queued run on an idle thread: %d %s, want 409 %s", r.status, r.body, want)
			}
		})
	}
}
