package platformruns_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// engineAndAssistants is assistantsOn with the engine itself, to plant runs the way a runs API
// caller or an older release could have.
func engineAndAssistants(t *testing.T) (*engine.Engine, *platformruns.Assistants) {
	t.Helper()
	return graphAssistants(t, examples.MustSupportAgent())
}

// Distinct thread ids give distinct, reserved instance ids: the thread named by the hex digits
// of another thread's hashed id does not get that thread's run id.
func TestInstanceID_DistinctAndReserved(t *testing.T) {
	weird := "a/b"
	sum := sha256.Sum256([]byte(weird))
	hexName := hex.EncodeToString(sum[:16])
	long := strings.Repeat("x", 300)
	ids := map[string]string{}
	for _, tid := range []string{weird, hexName, long, "t1", "~x", "-x", "thread-x"} {
		id := platformruns.InstanceID(tid)
		if !engine.ValidInstanceID(id) || !runsapi.ReservedInstanceID(id) {
			t.Errorf("InstanceID(%q) = %q: want a valid, reserved id", tid, id)
		}
		if other, dup := ids[id]; dup {
			t.Errorf("threads %q and %q share the run id %q", other, tid, id)
		}
		ids[id] = tid
	}
}

// A run at a thread's id that was not started for that thread (a runs API caller's from before
// ids were reserved, or an older release's hashed id of another thread) is not the thread's:
// its state, history and interrupt are not shown, a resume does not reach it, and deleting the
// thread leaves it.
func TestAssistants_ForeignRunAtThreadID_NotAdopted(t *testing.T) {
	e, a := engineAndAssistants(t)
	ctx := t.Context()
	sum := sha256.Sum256([]byte("alice/thread"))
	bobThread := hex.EncodeToString(sum[:16]) // "thread-<this>" is where an older release put alice's run
	for _, tc := range []struct{ name, runID, meta string }{
		{"older release's run of another thread", "thread-" + bobThread, `{"thread_id":"alice/thread","owner":"alice"}`},
		{"runs API caller's run, no thread", platformruns.InstanceID("t-squat"), `{"owner":"bob"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "support_agent", InstanceID: tc.runID,
				Input: json.RawMessage(`{"user_message":"I need legal advice"}`), Metadata: json.RawMessage(tc.meta)}); err != nil {
				t.Fatal(err)
			}
			waitWaiting(t, e, tc.runID)
			tid := strings.TrimPrefix(tc.runID, "thread-")
			if _, err := a.State(ctx, tid); !errors.Is(err, host.ErrThreadNotFound) {
				t.Errorf("state of thread %q shows a run not started for it: %v", tid, err)
			}
			if _, err := a.History(ctx, tid); !errors.Is(err, host.ErrThreadNotFound) {
				t.Errorf("history of thread %q shows a run not started for it: %v", tid, err)
			}
			_, err := a.Run(ctx, platform.DurableRunRequest{ThreadID: tid, Graph: "support_agent", Resume: json.RawMessage(`{"approved":true,"reviewer":"mallory"}`)})
			if !errors.Is(err, platform.ErrNoPendingInterrupt) {
				t.Errorf("resume through thread %q reached a run not started for it: %v", tid, err)
			}
			if err := a.DeleteThread(ctx, tid); err != nil {
				t.Fatal(err)
			}
			run, err := e.GetRun(ctx, tc.runID)
			if err != nil || run.RuntimeStatus != engine.StatusRunning {
				t.Errorf("deleting thread %q ended a run not started for it: %+v %v", tid, run.RuntimeStatus, err)
			}
		})
	}
}

func waitWaiting(t *testing.T, e *engine.Engine, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	run, err := e.WaitRun(ctx, id, engine.RunSettled)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := run.WaitingFor(); !ok {
		t.Fatalf("run %s does not wait: %s", id, run.RuntimeStatus)
	}
}
