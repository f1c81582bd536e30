package engine_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// A step's hold is judged by the store's time, never by the judge's clock: the two instances
// below share one store (whose timestamps follow the rig's clock), the second one's clock off
// by skew, and deliveries alternate between them.

// Every delivery begins (its hold stored), runs the node, then meets a storage error at its
// commit and at its release: nine deliveries, past MaxStepStarts (5), each item back after
// 30 s, within the lease of a minute. The instance whose clock is 2 min ahead takes every
// unreleased hold of the other for one past its lease; by the store's time none is, so no
// delivery counts as a death and the tenth completes the run.
func TestEngine_HoldJudgedByTheStore_InstanceAheadCountsNoStorageErrorAsDeath(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{2 * time.Minute, -2 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			var die atomic.Bool
			var entered atomic.Int32
			r := newRig(t, engine.Options{Clock: clk.now}, false, dyingGraph(t, &die, &entered))
			other := r.deploy(t, func() time.Time { return clk.now().Add(skew) }, dyingGraph(t, &die, &entered))
			engines := []*engine.Engine{r.e, other.e}
			const gap = 30 * time.Second
			if lease := r.e.Options().StepLease; gap >= lease || gap+skew.Abs() < lease {
				t.Fatalf("gap %v and skew %v against a lease of %v test nothing", gap, skew, lease)
			}
			var faulty atomic.Bool
			var released atomic.Int32
			faulty.Store(true)
			r.fstore.BeforeSubmit = func(ops []engine.Op) error {
				if !faulty.Load() {
					return nil
				}
				if releasesHold(ops) {
					released.Add(1)
					return enginetest.ErrInjected
				}
				if commitsNode(ops, "n0") {
					return enginetest.ErrInjected
				}
				return nil
			}
			id := r.start(t, "dying", "", `{}`)
			item := encodeItemAt(id, 1, 0)
			const failed = 9
			for count := int64(1); count <= failed; count++ {
				if err := engines[int(count)%2].HandleWorkItem(t.Context(), item, count); err == nil {
					run, _ := r.e.GetRun(t.Context(), id)
					t.Fatalf("delivery %d succeeded despite the faults: %s %s", count, run.RuntimeStatus, run.Output)
				}
				clk.advance(gap)
			}
			if released.Load() == 0 {
				t.Fatal("no release was tried: the scenario tests nothing")
			}
			faulty.Store(false)
			if err := engines[0].HandleWorkItem(t.Context(), item, failed+1); err != nil {
				t.Fatal(err)
			}
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusCompleted {
				t.Fatalf("status %s output %s: failed handlings were counted as deaths", run.RuntimeStatus, run.Output)
			}
			if n := entered.Load(); n != failed+1 {
				t.Errorf("the node ran %d times, want %d: every delivery must have reached its commit", n, failed+1)
			}
		})
	}
}

// A worker killed holding the step still counts, whatever the skew: each delivery dies in
// the node, its item back after the visibility timeout (past the lease by the store's time),
// and the next delivery, on the other instance, counts the death. The fifth start fails the
// run, as on one instance.
func TestEngine_HoldJudgedByTheStore_DeathsCountedWhateverTheSkew(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{2 * time.Minute, -2 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			var die atomic.Bool
			var entered atomic.Int32
			r := newRig(t, engine.Options{Clock: clk.now}, false, dyingGraph(t, &die, &entered))
			other := r.deploy(t, func() time.Time { return clk.now().Add(skew) }, dyingGraph(t, &die, &entered))
			rigs := []*rig{r, other}
			id := r.start(t, "dying", "", `{}`)
			item := encodeItemAt(id, 1, 0)
			die.Store(true)
			for count := int64(1); count <= 5; count++ {
				if died, err := deliverDying(rigs[int(count)%2], item, count); !died {
					run, _ := r.e.GetRun(t.Context(), id)
					t.Fatalf("delivery %d returned (%v) instead of dying in the node: %s %s", count, err, run.RuntimeStatus, run.Output)
				}
				clk.advance(r.e.Options().VisibilityTimeout)
			}
			if died, err := deliverDying(rigs[0], item, 6); died || err != nil {
				t.Fatalf("the sixth delivery died %v (err %v): it ran the node again, deaths went uncounted", died, err)
			}
			run, _ := r.e.GetRun(t.Context(), id)
			if run.RuntimeStatus != engine.StatusFailed || outputString(t, run) != killedFiveTimes {
				t.Fatalf("status %s output %s, want Failed: %s", run.RuntimeStatus, run.Output, killedFiveTimes)
			}
			if n := entered.Load(); n != 5 {
				t.Errorf("the node started %d times, want 5", n)
			}
		})
	}
}

// A start that finds another instance's hold and cannot read the store's time counts nothing:
// its delivery fails with the error, before the node runs. Nine such deliveries alternate
// with the other instance's, whose commits and releases fail; once storage is whole the run
// completes, none of it counted as a death.
func TestEngine_HoldJudgedByTheStore_StoreTimeUnreadable_NoDeath(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	var die atomic.Bool
	var entered atomic.Int32
	r := newRig(t, engine.Options{Clock: clk.now}, false, dyingGraph(t, &die, &entered))
	other := r.deploy(t, clk.now, dyingGraph(t, &die, &entered))
	engines := []*engine.Engine{r.e, other.e}
	var faulty atomic.Bool
	var clockReads atomic.Int32
	faulty.Store(true)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if !faulty.Load() {
			return nil
		}
		if ops[0].Entity.PartitionKey == "§repair" && ops[0].Entity.RowKey == "0clock" {
			clockReads.Add(1)
			return enginetest.ErrInjected
		}
		if releasesHold(ops) || commitsNode(ops, "n0") {
			return enginetest.ErrInjected
		}
		return nil
	}
	id := r.start(t, "dying", "", `{}`)
	item := encodeItemAt(id, 1, 0)
	const failed = 9
	for count := int64(1); count <= failed; count++ {
		if err := engines[int(count)%2].HandleWorkItem(t.Context(), item, count); err == nil {
			run, _ := r.e.GetRun(t.Context(), id)
			t.Fatalf("delivery %d succeeded despite the faults: %s %s", count, run.RuntimeStatus, run.Output)
		}
		clk.advance(30 * time.Second)
	}
	if clockReads.Load() == 0 {
		t.Fatal("no start read the store's time: the scenario tests nothing")
	}
	faulty.Store(false)
	if err := engines[0].HandleWorkItem(t.Context(), item, failed+1); err != nil {
		t.Fatal(err)
	}
	if run, _ := r.e.GetRun(t.Context(), id); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status %s output %s: a start that could not judge a hold counted it as a death", run.RuntimeStatus, run.Output)
	}
}
