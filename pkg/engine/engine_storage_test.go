package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

func TestEngine_LargeValues_SpillToPayloadStore(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "big", 2, nil))
	pad := strings.Repeat("é", 40000) // 40 000 UTF-16 units: above the inline limit
	in, _ := json.Marshal(map[string]any{"pad": pad})
	id := r.start(t, "big", "", string(in))
	r.drive(t)
	run, err := r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != engine.StatusCompleted || stateOf(t, run)["pad"] != pad || stateOf(t, run)["n"] != 2.0 {
		t.Fatalf("status %s, output of %d bytes", run.Status, len(run.Output))
	}
	var initial map[string]any
	if err := json.Unmarshal(run.Input.InitialState, &initial); err != nil || initial["pad"] != pad {
		t.Fatalf("input not restored: %v", err)
	}
	head, err := r.store.Get(t.Context(), id, "r")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"StateRef", "OutputRef", "InputRef"} {
		if ref, _ := head.Properties[p].(string); !strings.HasPrefix(ref, id+"/"+head.Properties["Nonce"].(string)+"/") {
			t.Errorf("head %s = %q, want a payload key", p, ref)
		}
	}
	for _, ev := range r.history(t, id) {
		if !json.Valid(ev.Data) {
			t.Errorf("history row %d data is not JSON", ev.Sequence)
		}
	}
	// A large event payload too.
	reviewer := strings.Repeat("r", 50000)
	payload, _ := json.Marshal(map[string]any{"approved": true, "reviewer": reviewer})
	sid := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), sid, "approval", payload); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	run, _ = r.e.GetRun(t.Context(), sid)
	if run.Status != engine.StatusCompleted || !strings.HasSuffix(stateOf(t, run)["final_response"].(string), reviewer+".") {
		t.Fatalf("large event: status %s", run.Status)
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if err := r.e.PurgeRun(t.Context(), sid); err != nil {
		t.Fatal(err)
	}
	if n := r.payloads.Len(); n != 0 {
		t.Errorf("%d payloads left after purging every run", n)
	}
}

func TestEngine_ListRuns_FiltersAndPages(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now.Store(base.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Add(int64(time.Second))).UTC() }
	r := newRig(t, engine.Options{Clock: clock}, false)
	for i := range 5 {
		r.start(t, "data_pipeline", fmt.Sprintf("p%d", i), `{"source_url":"u"}`)
	}
	r.drive(t)
	r.start(t, "support_agent", "s0", `{"user_message":"refund"}`)
	r.start(t, "support_agent", "s1", `{"user_message":"refund"}`)

	created := func(id string) time.Time {
		run, err := r.e.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return run.CreatedAt
	}
	list := func(q engine.RunQuery) []string {
		var ids []string
		for range 20 {
			page, err := r.e.ListRuns(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			for i, run := range page.Runs {
				if i > 0 && run.CreatedAt.After(page.Runs[i-1].CreatedAt) {
					t.Errorf("page not newest first")
				}
				ids = append(ids, run.InstanceID)
			}
			if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
				break
			}
		}
		return ids
	}
	tests := []struct {
		name string
		q    engine.RunQuery
		want int
	}{
		{"all", engine.RunQuery{Limit: 2}, 7},
		{"by graph", engine.RunQuery{GraphName: "support_agent"}, 2},
		{"by status", engine.RunQuery{Status: engine.StatusCompleted, Limit: 3}, 5},
		{"pending", engine.RunQuery{Status: engine.StatusPending}, 2},
		{"created window", engine.RunQuery{CreatedAfter: created("p2"), CreatedBefore: created("p4")}, 2},
	}
	for _, tt := range tests {
		if got := list(tt.q); len(got) != tt.want {
			t.Errorf("%s: %v, want %d runs", tt.name, got, tt.want)
		}
	}
}

func TestEngine_PurgeRun_OnlyFinished(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	r.start(t, "support_agent", "w", `{"user_message":"refund"}`)
	r.start(t, "data_pipeline", "d", `{"source_url":"u"}`)
	r.drive(t)
	var active *engine.RunNotFinishedError
	if err := r.e.PurgeRun(t.Context(), "w"); !errors.As(err, &active) || active.Status != engine.StatusRunning {
		t.Fatalf("purge of a waiting run: %v", err)
	}
	if err := r.e.PurgeRun(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.GetRun(t.Context(), "d"); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("purged run still readable: %v", err)
	}
	page, _ := r.store.Query(t.Context(), engine.Query{PartitionKey: "d"})
	if len(page.Entities) != 0 {
		t.Fatalf("%d rows left after purge", len(page.Entities))
	}
}

// TestEngine_StorageOps_PerStep counts storage operations through the instrumented store:
// a steady-state node step costs one table batch and no queue operation, because the worker
// that holds the run's work item continues it in-process.
func TestEngine_StorageOps_PerStep(t *testing.T) {
	t.Parallel()
	measure := func(steps int) (table, queue int64) {
		r := newRig(t, engine.Options{}, false, chainGraph(t, fmt.Sprintf("ops%d", steps), steps, nil))
		r.start(t, fmt.Sprintf("ops%d", steps), "", `{}`)
		r.drive(t)
		if r.counts.Payload() != 0 {
			t.Errorf("small state touched the payload store %d times", r.counts.Payload())
		}
		return r.counts.Table(), r.counts.Queue()
	}
	t3, q3 := measure(3)
	t12, q12 := measure(12)
	t.Logf("3-step run: %d table + %d queue ops (%.2f per step); 12-step run: %d + %d", t3, q3, float64(t3+q3)/3, t12, q12)
	// Per run: due row + start batch + due delete + head read + the Pending→Running merge +
	// one batch per step, plus the run index (four inserts at start, two merges and two
	// deletes at the finish); enqueue + receive + delete.
	// A store that returns no ETags costs one head read more per commit that goes on (all
	// but the last).
	perCommit := int64(1)
	if noETags {
		perCommit = 2
	}
	if want := 8 + 8 + (perCommit-1)*3; t3 != want || q3 != 3 {
		t.Errorf("3-step run: %d table ops and %d queue ops, want %d and 3", t3, q3, want)
	}
	perStep := float64((t12+q12)-(t3+q3)) / 9
	if perStep > float64(perCommit) || t12-t3 != 9*perCommit || q12 != q3 {
		t.Errorf("steady-state step costs %.2f ops (table %d, queue %d over 9 steps), want ≤ 2", perStep, t12-t3, q12-q3)
	}
}
