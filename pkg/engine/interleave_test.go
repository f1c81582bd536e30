package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// FuzzEngine_Interleavings drives many runs of a few reused ids (straight-line graphs, a
// fan-out, and a parent that runs a child) through random, seeded
// interleavings — duplicate and failed enqueues, writes that fail before or after they
// land, lost replies (the write lands and the SDK's retry meets it: a conflict or not-found
// of its own making), writes that land late, after their caller got an error and went on,
// workers that die holding a message, early and late timers (clock skew), repair passes and
// listings on instances whose clocks run 2 min ahead or behind, events before, during and
// after waits, cancels, purges and restarts — then heals the faults, lets everything
// quiesce and checks the invariants of issues #10, #18, #32 and #33 (every accepted event stored
// once, a failed start or raise stored nothing unless its late write landed, no run left
// Pending or Running, every stored run listed once with no orphan index or due row). A
// failing input is reproducible from (seed, actions): repair passes run one row at a time,
// and listings (whose head reads run in parallel) inject no fault. `go test` runs the seed corpus in seconds (twice:
// with and without store ETags); `make fuzz` explores further, and
// FUNCGRAPH_INTERLEAVINGS=<n> runs n more seeds under `go test`.
func FuzzEngine_Interleavings(f *testing.F) {
	for seed := range int64(6) {
		f.Add(seed, uint16(250))
	}
	if n, _ := strconv.Atoi(os.Getenv("FUNCGRAPH_INTERLEAVINGS")); n > 0 {
		for seed := range int64(n) {
			f.Add(1000+seed, uint16(600))
		}
	}
	f.Fuzz(func(t *testing.T, seed int64, actions uint16) {
		interleave(t, seed, int(actions%1000)+1)
	})
}

// incarnation is one start of an id, as the test saw it.
type incarnation struct {
	graph      string
	accepted   int // events accepted (nil from RaiseEvent)
	maybe      int // events whose RaiseEvent failed (so not stored, unless held and landed late)
	lateLanded int // events whose failed RaiseEvent's batch landed late
	gone       bool
}

func interleave(t *testing.T, seed int64, actions int) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	clk := newFakeClock()
	var keysMu sync.Mutex
	keyOwners := map[string]string{} // idempotency key → run id + nonce
	keyed := chainGraph(t, "keyed", 3, func(ctx context.Context, s counterState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		keysMu.Lock()
		defer keysMu.Unlock()
		owner := info.RunID + "/" + info.Nonce
		if prev, ok := keyOwners[info.IdempotencyKey()]; ok && prev != owner {
			t.Errorf("idempotency key %s shared by %s and %s", info.IdempotencyKey(), prev, owner)
		}
		keyOwners[info.IdempotencyKey()] = owner
		return durable.Update{"n": s.N + 1}, nil
	})
	// The fan-out's branch 1 fails its first call and is retried after a back-off; no call of
	// it may start while its progress row says the back-off runs (clocks only schedule: an
	// instance 2 min ahead, or this worker's 30 s behind, may move it by that much).
	var rig *rig
	var flakyMu sync.Mutex
	flakyCalls := map[string]int{}
	flaky := func(ctx context.Context, s fanState) (any, error) {
		info, _ := durable.StepInfoFrom(ctx)
		if b, _ := durable.BranchFrom(ctx); b.Index == 1 {
			checkNoBackOffRuns(t, rig, seed, info.RunID, clk.now().Add(interleaveSkewSlack))
			flakyMu.Lock()
			key := info.RunID + "/" + info.Nonce
			flakyCalls[key]++
			first := flakyCalls[key] == 1
			flakyMu.Unlock()
			if first {
				return nil, errors.New("flaky source")
			}
		}
		return fanWork(ctx, s)
	}
	r := newRig(t, engine.Options{Clock: clk.now, RepairAfter: time.Minute,
		Policies: map[string]engine.GraphPolicy{
			"support_agent": {WaitTimeout: 10 * time.Minute, WaitTimeoutNode: "draft_reply"},
			"fan":           {Retry: engine.RetryPolicy{MaxAttempts: 3, InitialBackoff: 5 * time.Minute, MaxBackoff: 5 * time.Minute}},
		}}, false, keyed, fanGraph(t, "fan", flaky), fuzzParentGraph(t))
	rig = r
	engine.SetSweepParallel(r.e, 1)
	faults := true
	chance := func(p float64) bool { return faults && rng.Float64() < p }
	// Writes that reach the service late: their caller gets an error at once, and they land
	// (or fail on their conditions) when the test says.
	late := withLateStore(r, func([]engine.Op) bool { return chance(0.02) })
	// Other instances of the app on the same storage, their clocks 2 min ahead and behind.
	var others []*engine.Engine
	for _, skew := range []time.Duration{2 * time.Minute, -2 * time.Minute} {
		o := skewedEngine(t, r, clk, skew, engine.Options{RepairAfter: time.Minute, Policies: r.e.Options().Policies})
		engine.SetSweepParallel(o, 1)
		others = append(others, o)
	}
	r.fstore.BeforeSubmit = func([]engine.Op) error {
		if chance(0.04) {
			return enginetest.ErrInjected
		}
		return nil
	}
	r.fstore.AfterSubmit = func([]engine.Op) error {
		if chance(0.04) {
			return enginetest.ErrInjected // written, but the writer never learns
		}
		return nil
	}
	r.fstore.LoseReply = func([]engine.Op) bool { return chance(0.04) }
	r.fqueue.AfterEnqueue = func([]byte) error {
		if chance(0.03) {
			return enginetest.ErrInjected // queued, but the producer never learns
		}
		return nil
	}
	r.fqueue.LoseDelete = func(engine.Message) bool { return chance(0.05) }
	r.fqueue.OnEnqueue = func([]byte) (int, error) {
		switch {
		case chance(0.05):
			return 0, enginetest.ErrInjected
		case chance(0.1):
			return 2, nil
		}
		return 1, nil
	}
	ctx := context.Background()
	ids := []string{"a", "b", "c", "d", "e"}
	runs := map[string]*incarnation{}
	inputs := map[string]string{
		"data_pipeline": `{"source_url":"https://example.com/data"}`, "support_agent": `{"user_message":"refund"}`, "keyed": `{}`,
		"fan": fanInput(interleaveFanWidth), "parent": `{}`,
	}
	graphs := []string{"data_pipeline", "support_agent", "keyed", "fan", "parent"}
	heldFor := func(id string, pick func([]engine.Op) bool) bool {
		return late.holds(func(ops []engine.Op) bool { return ops[0].Entity.PartitionKey == id && pick(ops) })
	}
	// landLate lets the held writes land, counting the events that did.
	landLate := func() {
		for _, b := range late.land(ctx) {
			if b.err == nil && isEventBatch(b.ops) {
				if inc := runs[b.ops[0].Entity.PartitionKey]; inc != nil {
					inc.lateLanded++
				}
			}
		}
	}
	queries := []engine.RunQuery{{}, {Status: engine.StatusRunning}, {Status: engine.StatusPending}}
	for _, g := range graphs {
		queries = append(queries, engine.RunQuery{GraphName: g}, engine.RunQuery{GraphName: g, Status: engine.StatusRunning})
	}
	// list lists with faults off: a listing's head reads run in parallel, and a fault drawn
	// from the seeded source in parallel would make the input irreproducible.
	list := func(e *engine.Engine, q engine.RunQuery) {
		was := faults
		faults = false
		defer func() { faults = was }()
		for range 100 {
			page, err := e.ListRuns(ctx, q)
			if err != nil {
				t.Fatalf("seed %d: list %+v: %v", seed, q, err)
			}
			if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
				return
			}
		}
	}
	deliver := func(die bool) bool {
		msgs, err := r.queue.Receive(ctx, 1, time.Minute)
		if err != nil || len(msgs) == 0 {
			return false
		}
		if die {
			return true // the worker died holding it: it comes back after a minute
		}
		if rng.IntN(10) == 0 { // this worker's clock runs behind: timers look early
			clk.advance(-30 * time.Second)
			defer clk.advance(30 * time.Second)
		}
		e := r.e
		if n := rng.IntN(8); n < len(others) { // an instance whose clock runs 2 min ahead or behind
			e = others[n]
		}
		if e.HandleWorkItem(ctx, msgs[0].Body, msgs[0].DequeueCount) == nil {
			_ = r.fqueue.Delete(ctx, msgs[0])
		}
		return true
	}
	for range actions {
		id := ids[rng.IntN(len(ids))]
		switch k := rng.IntN(24); {
		case k < 3:
			g := graphs[rng.IntN(len(graphs))]
			var exists *engine.RunExistsError
			// A start that fails stored nothing: the engine resolves an unknown outcome by
			// reading the head (the ambiguity rule), and reads never fail here — unless its
			// head batch is held and lands later, or a fence settled it (a retryable conflict).
			// Index row keys hold the creation time (100 ns): time passes between requests.
			clk.advance(time.Millisecond)
			_, err := r.e.StartRun(ctx, engine.StartRunRequest{GraphName: g, InstanceID: id, Input: json.RawMessage(inputs[g])})
			switch {
			case err == nil:
				runs[id] = &incarnation{graph: g}
			case !errors.As(err, &exists) && !errors.Is(err, enginetest.ErrInjected) && !errors.Is(err, engine.ErrConflict):
				t.Fatalf("seed %d: start %s: %v", seed, id, err)
			case heldFor(id, isHeadBatch):
				if inc := runs[id]; inc != nil {
					inc.gone = true // replaced by the held start if it lands
				}
			}
		case k < 6:
			err := r.e.RaiseEvent(ctx, id, "approval", json.RawMessage(`{"approved":true,"reviewer":"r"}`))
			var finished *engine.RunFinishedError
			if inc := runs[id]; inc != nil {
				switch {
				case err == nil:
					inc.accepted++
				case !errors.Is(err, engine.ErrRunNotFound) && !errors.As(err, &finished):
					inc.maybe++
				}
			}
		case k < 7:
			_ = r.e.CancelRun(ctx, id, "stop")
		case k < 8:
			var active *engine.RunNotFinishedError
			if err := r.e.PurgeRun(ctx, id); !errors.As(err, &active) && !errors.Is(err, engine.ErrRunNotFound) {
				if inc := runs[id]; inc != nil {
					inc.gone = true // purged, or maybe (an injected fault after the write)
				}
			}
		case k < 9:
			clk.advance(time.Duration(rng.IntN(120)) * time.Second)
		case k < 10:
			_, _ = r.e.Sweep(ctx)
		case k < 11:
			_, _ = others[rng.IntN(len(others))].Sweep(ctx)
		case k < 12:
			e := r.e
			if n := rng.IntN(3); n < len(others) {
				e = others[n]
			}
			list(e, queries[rng.IntN(len(queries))])
		case k < 13:
			landLate()
		default:
			deliver(rng.IntN(15) == 0)
		}
	}
	// Heal and quiesce: the held writes land, then time passes every visibility timeout,
	// repair delay and wait timeout.
	faults = false
	landLate()
	for range 50 {
		clk.advance(11 * time.Minute)
		if _, err := r.e.Sweep(ctx); err != nil {
			t.Fatalf("seed %d: sweep: %v", seed, err)
		}
		moved := false
		for deliver(false) {
			moved = true
		}
		if !moved && r.queue.Len() == 0 {
			break
		}
	}
	// Listings settle what they meet: rows of replaced runs, of starts a fence settled.
	clk.advance(11 * time.Minute)
	for _, q := range queries {
		list(r.e, q)
	}
	for id, inc := range runs {
		checkQuiescentRun(t, r, seed, id, inc)
	}
	for _, id := range ids {
		if run, err := r.e.GetRun(ctx, id); err == nil && !run.RuntimeStatus.Finished() {
			t.Errorf("seed %d run %s: still %s after quiescence", seed, id, run.RuntimeStatus)
		}
		enginetest.CheckNoOrphanRows(t, r.store, r.e, id)
	}
}

func checkQuiescentRun(t *testing.T, r *rig, seed int64, id string, inc *incarnation) {
	t.Helper()
	run, err := r.e.GetRun(context.Background(), id)
	if errors.Is(err, engine.ErrRunNotFound) && inc.gone {
		return
	}
	if err != nil {
		t.Fatalf("seed %d run %s: status: %v (a payload of a live run missing?)", seed, id, err)
	}
	if inc.gone || run.GraphName != inc.graph {
		return // replaced by a start whose answer was lost to an injected fault
	}
	if due := rowsNaming(t, r, "Run", id); len(due) != 0 {
		t.Errorf("seed %d run %s: %d due rows left after quiescence", seed, id, len(due))
	}
	hist := r.history(t, id)
	if inc.graph == "fan" {
		checkQuiescentFan(t, r, seed, id, run, inc, hist)
		return
	}
	if inc.graph == "parent" {
		checkQuiescentParent(t, r, seed, id, run, inc, hist)
		return
	}
	rows := checkHistory(t, hist) // gap-free
	seen := map[string]int{}
	received := 0
	for _, row := range rows {
		if strings.HasPrefix(row, engine.HistoryNodeCompleted+":") {
			seen[row]++
		}
		if strings.HasPrefix(row, engine.HistoryEventReceived+":") {
			received++
		}
	}
	for row, n := range seen {
		if n > 1 && inc.graph != "keyed" {
			t.Errorf("seed %d run %s: %s committed %d times: %v", seed, id, row, n, rows)
		}
	}
	// A raise that failed stored nothing unless its batch landed late, one that was accepted
	// stored one event.
	if received != inc.accepted+inc.lateLanded {
		t.Errorf("seed %d run %s: %d events accepted (%d raises failed, %d of them landed late), %d stored: %v",
			seed, id, inc.accepted, inc.maybe, inc.lateLanded, received, rows)
	}
	switch run.RuntimeStatus {
	case engine.StatusCompleted:
		if inc.graph == "data_pipeline" && string(run.Output) != pipelineFinal {
			t.Errorf("seed %d run %s: output %s differs from a sequential run's", seed, id, run.Output)
		}
		if inc.graph == "keyed" && fmt.Sprint(stateOf(t, run)["n"]) != "3" {
			t.Errorf("seed %d run %s: output %s, want n=3", seed, id, run.Output)
		}
	case engine.StatusTerminated:
	case engine.StatusFailed:
		if out := outputString(t, run); !strings.Contains(out, "without completing: its worker died") {
			t.Errorf("seed %d run %s failed: %s", seed, id, out)
		}
	default:
		t.Errorf("seed %d run %s: still %s after quiescence: %v", seed, id, run.RuntimeStatus, rows)
	}
}

// interleaveFanWidth is the width of the fan-out runs of the interleaving fuzz.
const interleaveFanWidth = 4

// interleaveSkewSlack is how early a timer may fire in the interleaving fuzz: an instance
// 2 min ahead, and a worker 30 s behind.
const interleaveSkewSlack = 2*time.Minute + 30*time.Second

// checkNoBackOffRuns fails the test when a branch of run id starts while its progress row
// (read from the store itself, without faults) says its back-off lasts past now.
func checkNoBackOffRuns(t *testing.T, r *rig, seed int64, id string, now time.Time) {
	t.Helper()
	page, err := r.store.Query(context.Background(), engine.Query{PartitionKey: id, RowKeyFrom: "k", RowKeyTo: "l"})
	if err != nil {
		t.Errorf("seed %d run %s: read branch progress: %v", seed, id, err)
		return
	}
	for _, ent := range page.Entities {
		if nb, _ := ent.Properties["NotBefore"].(int64); nb > now.UnixNano() {
			t.Errorf("seed %d run %s: a branch started %v before its back-off ended (%s)", seed, id, time.Unix(0, nb).Sub(now), ent.RowKey)
		}
	}
}

// checkQuiescentFan checks a quiescent fan-out run: its history in order (with the gaps of
// its branch region), each visit and each branch's completion at most once, and the joined
// state of a sequential run when it completed.
func checkQuiescentFan(t *testing.T, r *rig, seed int64, id string, run engine.Run, inc *incarnation, hist []engine.HistoryEvent) {
	t.Helper()
	seen := map[string]int{}
	var rows []string
	last, received := int64(0), 0
	for _, ev := range hist {
		if ev.Sequence <= last {
			t.Fatalf("seed %d run %s: history out of order at %d", seed, id, ev.Sequence)
		}
		last = ev.Sequence
		key := ev.Type + ":" + ev.Node
		if ev.Type == engine.HistoryBranchCompleted || ev.Type == engine.HistoryBranchFailed {
			var d struct {
				Index int `json:"index"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			key = fmt.Sprintf("branch:%d", d.Index)
		}
		if ev.Type == engine.HistoryEventReceived {
			received++
		} else {
			seen[key]++
		}
		rows = append(rows, key)
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("seed %d run %s: %s %d times: %v", seed, id, k, n, rows)
		}
	}
	if received != inc.accepted {
		t.Errorf("seed %d run %s: %d events accepted, %d stored", seed, id, inc.accepted, received)
	}
	switch run.RuntimeStatus {
	case engine.StatusCompleted:
		assertFanDone(t, r, id, interleaveFanWidth)
	case engine.StatusTerminated:
	case engine.StatusFailed:
		if out := outputString(t, run); !strings.Contains(out, "without completing") {
			t.Errorf("seed %d run %s failed: %s", seed, id, out)
		}
	default:
		t.Errorf("seed %d run %s: still %s after quiescence: %v", seed, id, run.RuntimeStatus, rows)
	}
}

// fuzzParentState is the state of the parent graph of the interleaving fuzz.
type fuzzParentState struct {
	N     int            `json:"n"`
	Child map[string]any `json:"child"`
}

// fuzzParentGraph builds "parent": spawn starts a child run of "keyed" (three steps to n=3) into
// the field child, and done, terminal, sets n to 1.
func fuzzParentGraph(t testing.TB) durable.GraphRegistration[fuzzParentState] {
	t.Helper()
	b := durable.NewManifestBuilder[fuzzParentState]("parent")
	b.SetEntrypoint("spawn")
	if err := b.AddNode("spawn", func(context.Context, fuzzParentState) (any, error) { return nil, nil },
		durable.WithRoute(func(context.Context, fuzzParentState) (any, error) {
			return durable.StartChild("keyed", map[string]any{}, "done").Into("child"), nil
		})); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("done", func(context.Context, fuzzParentState) (any, error) { return durable.Update{"n": 1}, nil }, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	if err := b.AddEventHandler("approval", func(context.Context, fuzzParentState, json.RawMessage) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkQuiescentParent checks a quiescent parent run: its history in order, one child started
// and (when it completed) one child completed, the child a finished keyed run whose final
// state the parent holds, and the events accepted stored once (the child's own notice apart).
func checkQuiescentParent(t *testing.T, r *rig, seed int64, id string, run engine.Run, inc *incarnation, hist []engine.HistoryEvent) {
	t.Helper()
	counts := map[string]int{}
	received := 0
	last := int64(0)
	for _, ev := range hist {
		if ev.Sequence <= last {
			t.Fatalf("seed %d run %s: history out of order at %d", seed, id, ev.Sequence)
		}
		last = ev.Sequence
		counts[ev.Type]++
		if ev.Type == engine.HistoryEventReceived && !strings.HasPrefix(ev.Name, engine.ChildRunPrefix) {
			received++
		}
	}
	if counts[engine.HistoryChildStarted] > 1 || counts[engine.HistoryChildCompleted] > 1 {
		t.Errorf("seed %d run %s: %d child_started, %d child_completed rows: %v", seed, id,
			counts[engine.HistoryChildStarted], counts[engine.HistoryChildCompleted], hist)
	}
	if received != inc.accepted+inc.lateLanded {
		t.Errorf("seed %d run %s: %d events accepted (%d landed late), %d stored", seed, id, inc.accepted, inc.lateLanded, received)
	}
	switch run.RuntimeStatus {
	case engine.StatusCompleted:
		if len(run.ChildInstanceIDs) != 1 || counts[engine.HistoryChildCompleted] != 1 {
			t.Fatalf("seed %d run %s: completed with children %v and %d child_completed rows", seed, id, run.ChildInstanceIDs, counts[engine.HistoryChildCompleted])
		}
		child, err := r.e.GetRun(context.Background(), run.ChildInstanceIDs[0])
		if err != nil || child.RuntimeStatus != engine.StatusCompleted {
			t.Fatalf("seed %d run %s: child %s: %v %v", seed, id, run.ChildInstanceIDs[0], child.RuntimeStatus, err)
		}
		st := stateOf(t, run)
		if c, _ := st["child"].(map[string]any); fmt.Sprint(c["n"]) != "3" || fmt.Sprint(st["n"]) != "1" {
			t.Errorf("seed %d run %s: state %v, want the child's n=3 and n=1", seed, id, st)
		}
	case engine.StatusTerminated:
	case engine.StatusFailed:
		if out := outputString(t, run); !strings.Contains(out, "without completing: its worker died") && !strings.Contains(out, "child run") {
			t.Errorf("seed %d run %s failed: %s", seed, id, out)
		}
	default:
		t.Errorf("seed %d run %s: still %s after quiescence", seed, id, run.RuntimeStatus)
	}
	for _, cid := range run.ChildInstanceIDs {
		if child, err := r.e.GetRun(context.Background(), cid); err == nil && !child.RuntimeStatus.Finished() {
			t.Errorf("seed %d run %s: child %s still %s after quiescence", seed, id, cid, child.RuntimeStatus)
		}
	}
}
