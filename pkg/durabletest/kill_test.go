package durabletest_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Order is the state of orderGraph: "charge" charges a card (a side effect outside the run),
// then "ship" ends the run.
type Order struct {
	ID      string `json:"id"`
	Charged bool   `json:"charged"`
	Shipped bool   `json:"shipped"`
}

// ledger records a graph's side effects as a test chooses to count them: every call of a
// handler, and the idempotency keys it was called with.
type ledger struct {
	mu   sync.Mutex
	keys map[string][]string // node → the idempotency key of each call, in call order
}

// record notes a call of node's handler under ctx.
func (l *ledger) record(ctx context.Context, node string) {
	info, _ := durable.StepInfoFrom(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = map[string][]string{}
	}
	l.keys[node] = append(l.keys[node], info.IdempotencyKey())
}

// calls returns the idempotency keys of node's calls.
func (l *ledger) calls(node string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keys[node])
}

// orderGraph is charge → ship, recording calls in l.
func orderGraph(t testing.TB, l *ledger) durable.GraphRegistration[Order] {
	t.Helper()
	b := durable.NewManifestBuilder[Order]("orders")
	b.SetEntrypoint("charge")
	_ = b.AddStep("charge", func(ctx context.Context, s Order) (Order, error) {
		l.record(ctx, "charge")
		s.Charged = true
		return s, nil
	}, durable.WithDecide(func(context.Context, Order) (durable.RouteDecision, error) { return durable.Next("ship"), nil }))
	_ = b.AddStep("ship", func(ctx context.Context, s Order) (Order, error) {
		l.record(ctx, "ship")
		s.Shipped = true
		return s, nil
	}, durable.Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Batch is the state of batchGraph: "plan" fans "enrich" out over Items, "done" joins.
type Batch struct {
	Items    []string `json:"items"`
	Enriched []string `json:"enriched"`
}

// batchGraph fans enrich out over the items; onEnrich, if set, runs in each enrich call.
func batchGraph(t testing.TB, l *ledger, onEnrich func(item string)) durable.GraphRegistration[Batch] {
	t.Helper()
	b := durable.NewManifestBuilder[Batch]("batch")
	b.SetEntrypoint("plan")
	_ = b.AddStep("plan", func(_ context.Context, s Batch) (Batch, error) { return s, nil },
		durable.WithDecide(func(_ context.Context, s Batch) (durable.RouteDecision, error) {
			return durable.Map("done", "enrich", s.Items), nil
		}))
	_ = b.AddStep("enrich", func(ctx context.Context, s Batch) (Batch, error) {
		item, err := durable.BranchItem[string](ctx)
		if err != nil {
			return s, err
		}
		l.record(ctx, "enrich:"+item)
		if onEnrich != nil {
			onEnrich(item)
		}
		s.Enriched = append(s.Enriched, item)
		return s, nil
	})
	_ = b.AddStep("done", func(_ context.Context, s Batch) (Batch, error) { return s, nil }, durable.Terminal())
	if err := b.Reduce("enriched", durable.Append); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// committed counts the history rows of h that commit node's handler return: node_completed,
// and branch_completed of the branch with item (item "" : of any branch).
func committed(t testing.TB, h []durabletest.HistoryEvent, node, item string) int {
	t.Helper()
	n := 0
	for _, ev := range h {
		switch ev.Type {
		case durabletest.HistoryNodeCompleted:
			if ev.Node == node {
				n++
			}
		case durabletest.HistoryBranchCompleted:
			var d struct {
				Item string `json:"item"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatalf("branch_completed row %d: %v", ev.Sequence, err)
			}
			if ev.Node == node && (item == "" || d.Item == item) {
				n++
			}
		}
	}
	return n
}

// logbook is a slog.Handler that keeps the messages of the records it is handed, every level.
type logbook struct {
	mu   sync.Mutex
	msgs []string
}

func (b *logbook) Enabled(context.Context, slog.Level) bool { return true }

func (b *logbook) Handle(_ context.Context, r slog.Record) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, r.Message)
	return nil
}

func (b *logbook) WithAttrs([]slog.Attr) slog.Handler { return b }
func (b *logbook) WithGroup(string) slog.Handler      { return b }

// count returns how many records had message msg.
func (b *logbook) count(msg string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, m := range b.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// sameKeys fails t unless keys holds want calls, all with one idempotency key.
func sameKeys(t testing.TB, what string, keys []string, want int) {
	t.Helper()
	if len(keys) != want {
		t.Fatalf("%s: %d handler calls %q, want %d", what, len(keys), keys, want)
	}
	for _, k := range keys {
		if k != keys[0] || k == "" {
			t.Fatalf("%s: idempotency keys %q, want one key", what, keys)
		}
	}
}

// TestKit_CrashAfterHandler_HandlerRunsTwiceStepCommitsOnce: the worker dies after charge's
// handler returned, before its commit: the item comes back after its visibility timeout, the
// handler runs again with the same idempotency key, and the step commits once.
func TestKit_CrashAfterHandler_HandlerRunsTwiceStepCommitsOnce(t *testing.T) {
	var l ledger
	kit := durabletest.New(t, orderGraph(t, &l), durabletest.Options{})
	first := kit.Engine()
	kit.CrashAfterHandler("charge", 1)
	start := kit.Now()

	run := kit.Start("o1", Order{ID: "o1"})
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s, want Completed", run.RuntimeStatus)
	}
	sameKeys(t, "charge", l.calls("charge"), 2)
	sameKeys(t, "ship", l.calls("ship"), 1)
	h := kit.History("o1")
	if n := committed(t, h, "charge", ""); n != 1 {
		t.Fatalf("%d node_completed rows of charge, want 1", n)
	}
	if got := kit.Visits("o1"); !slices.Equal(got, []string{"charge", "ship"}) {
		t.Fatalf("visits %q", got)
	}
	if got := kit.Now().Sub(start); got != engine.DefaultVisibilityTimeout {
		t.Fatalf("the dead worker's item came back after %s, want its visibility timeout %s", got, engine.DefaultVisibilityTimeout)
	}
	if kit.Engine() == first {
		t.Fatal("the crash did not restart the engine")
	}
	if f := kit.Final("o1"); !f.Charged || !f.Shipped {
		t.Fatalf("final %+v", f)
	}
}

// TestKit_CrashAfterHandler_BranchCommitsOnce: the worker dies twice after the handler of
// the first branch (a) returned, each time holding the items of the other branches: every
// branch commits once, a's handler runs three times with one key, and the join sees every
// item once.
func TestKit_CrashAfterHandler_BranchCommitsOnce(t *testing.T) {
	var l ledger
	kit := durabletest.New(t, batchGraph(t, &l, nil), durabletest.Options{})
	kit.CrashAfterHandler("enrich", 2) // the first two returns of a branch handler: both are a's, the first branch

	kit.Start("b1", Batch{Items: []string{"a", "b", "c", "d"}})
	if got := kit.Final("b1").Enriched; !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("joined %q", got)
	}
	h := kit.History("b1")
	for _, item := range []string{"a", "b", "c", "d"} {
		if n := committed(t, h, "enrich", item); n != 1 {
			t.Fatalf("branch %s committed %d times, want 1", item, n)
		}
	}
	sameKeys(t, "a", l.calls("enrich:a"), 3) // crashed twice: once as the first delivery, once redelivered
	sameKeys(t, "b", l.calls("enrich:b"), 1)
	sameKeys(t, "c", l.calls("enrich:c"), 1)
}

// TestKit_CrashAfterHandler_KeepsKillingFailsAsPoison: a step that kills its worker every
// time fails its run once it was started MaxStepStarts times without completing, naming the
// deaths; short of that, it completes.
func TestKit_CrashAfterHandler_KeepsKillingFailsAsPoison(t *testing.T) {
	for _, tt := range []struct {
		crashes int
		want    durabletest.RunStatus
	}{{4, durabletest.StatusCompleted}, {5, durabletest.StatusFailed}} {
		var l ledger
		kit := durabletest.New(t, orderGraph(t, &l), durabletest.Options{})
		kit.CrashAfterHandler("charge", tt.crashes)
		run := kit.Start("o1", Order{ID: "o1"})
		if run.RuntimeStatus != tt.want {
			t.Fatalf("%d crashes: status %s, want %s (output %s)", tt.crashes, run.RuntimeStatus, tt.want, run.Output)
		}
		if tt.want == durabletest.StatusFailed && !strings.Contains(string(run.Output), "was started 5 times without completing") {
			t.Fatalf("%d crashes: output %s, want the kill limit named", tt.crashes, run.Output)
		}
		if n := committed(t, kit.History("o1"), "charge", ""); n != 1-int(min(tt.crashes/5, 1)) {
			t.Fatalf("%d crashes: %d commits of charge", tt.crashes, n)
		}
	}
}

// TestKit_ConcurrentDelivery_HandlerRunsTwiceCommitsOnce: a second delivery of the item runs
// while the first is between its handler's return and its commit; both handlers run with one
// key, one commit lands (the head's If-Match for a step, the slot's insert for a branch) and
// the other commits nothing.
func TestKit_ConcurrentDelivery_HandlerRunsTwiceCommitsOnce(t *testing.T) {
	t.Run("step", func(t *testing.T) {
		var l ledger
		kit := durabletest.New(t, orderGraph(t, &l), durabletest.Options{})
		kit.ConcurrentDelivery("charge", 1)
		if run := kit.Start("o1", Order{ID: "o1"}); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("status %s", run.RuntimeStatus)
		}
		sameKeys(t, "charge", l.calls("charge"), 2)
		sameKeys(t, "ship", l.calls("ship"), 1)
		h := kit.History("o1")
		if n := committed(t, h, "charge", ""); n != 1 {
			t.Fatalf("%d node_completed rows of charge, want 1", n)
		}
		if got := kit.Visits("o1"); !slices.Equal(got, []string{"charge", "ship"}) {
			t.Fatalf("visits %q", got)
		}
	})
	t.Run("branch", func(t *testing.T) {
		var l ledger
		kit := durabletest.New(t, batchGraph(t, &l, nil), durabletest.Options{})
		kit.ConcurrentDelivery("enrich", 1)
		kit.Start("b1", Batch{Items: []string{"a", "b", "c"}})
		if got := kit.Final("b1").Enriched; !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("joined %q", got)
		}
		sameKeys(t, "a", l.calls("enrich:a"), 2)
		sameKeys(t, "b", l.calls("enrich:b"), 1)
		if n := committed(t, kit.History("b1"), "enrich", "a"); n != 1 {
			t.Fatalf("branch a committed %d times, want 1", n)
		}
	})
}

// TestKit_DuplicateDelivery_SecondDeliveryCommitsNothing: a copy of the item delivered after
// the first was handled commits nothing: a step's copy finds the run moved on and runs no
// handler; a branch's copy runs the handler again and finds the branch committed.
func TestKit_DuplicateDelivery_SecondDeliveryCommitsNothing(t *testing.T) {
	t.Run("step", func(t *testing.T) {
		var l ledger
		var log logbook
		kit := durabletest.New(t, orderGraph(t, &l), durabletest.Options{Logger: slog.New(&log)})
		kit.DuplicateDelivery("charge", 1)
		kit.DuplicateDelivery("ship", 1) // the copy of the last step's item finds the run finished
		if run := kit.Start("o1", Order{ID: "o1"}); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("status %s", run.RuntimeStatus)
		}
		sameKeys(t, "charge", l.calls("charge"), 1)
		sameKeys(t, "ship", l.calls("ship"), 1)
		h := kit.History("o1")
		if n, m := committed(t, h, "charge", ""), committed(t, h, "ship", ""); n != 1 || m != 1 {
			t.Fatalf("charge committed %d times, ship %d; want 1 each", n, m)
		}
		// The copies were delivered, and dropped: the first item ran the run to its end.
		if n := log.count("dropping work item of another or a finished run"); n != 2 {
			t.Fatalf("%d copies dropped, want 2", n)
		}
	})
	t.Run("branch", func(t *testing.T) {
		var l ledger
		kit := durabletest.New(t, batchGraph(t, &l, nil), durabletest.Options{})
		kit.DuplicateDelivery("enrich", 3)
		kit.Start("b1", Batch{Items: []string{"a", "b", "c"}})
		if got := kit.Final("b1").Enriched; !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("joined %q", got)
		}
		h := kit.History("b1")
		for _, item := range []string{"a", "b", "c"} {
			sameKeys(t, item, l.calls("enrich:"+item), 2)
			if n := committed(t, h, "enrich", item); n != 1 {
				t.Fatalf("branch %s committed %d times, want 1", item, n)
			}
		}
	})
}

// TestKit_LoseReply_EngineReadsItsOwnWrite: the commit of charge (of a branch) lands and its
// reply is lost, the retry answering a conflict with the write itself: the engine reads back
// its own write and goes on, the handler having run once and the step committed once.
func TestKit_LoseReply_EngineReadsItsOwnWrite(t *testing.T) {
	t.Run("step", func(t *testing.T) {
		var l ledger
		var log logbook
		kit := durabletest.New(t, orderGraph(t, &l), durabletest.Options{Logger: slog.New(&log)})
		kit.LoseReply("charge", 1)
		start := kit.Now()
		if run := kit.Start("o1", Order{ID: "o1"}); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("status %s: the lost reply stalled the run", run.RuntimeStatus)
		}
		sameKeys(t, "charge", l.calls("charge"), 1)
		sameKeys(t, "ship", l.calls("ship"), 1)
		if n := committed(t, kit.History("o1"), "charge", ""); n != 1 {
			t.Fatalf("%d node_completed rows of charge, want 1", n)
		}
		if n := log.count("commit landed although its answer was an error"); n != 1 {
			t.Fatalf("the engine resolved %d lost replies as its own writes, want 1", n)
		}
		if !kit.Now().Equal(start) {
			t.Fatalf("the run waited %s for a redelivery: the engine did not resolve its write", kit.Now().Sub(start))
		}
	})
	t.Run("branch", func(t *testing.T) {
		var l ledger
		var log logbook
		kit := durabletest.New(t, batchGraph(t, &l, nil), durabletest.Options{Logger: slog.New(&log)})
		kit.LoseReply("enrich", 3)
		kit.Start("b1", Batch{Items: []string{"a", "b", "c"}})
		if got := kit.Final("b1").Enriched; !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("joined %q", got)
		}
		if n := log.count("branch commit landed although its answer was an error"); n != 3 {
			t.Fatalf("the engine resolved %d lost replies as its own writes, want 3", n)
		}
		h := kit.History("b1")
		for _, item := range []string{"a", "b", "c"} {
			sameKeys(t, item, l.calls("enrich:"+item), 1)
			if n := committed(t, h, "enrich", item); n != 1 {
				t.Fatalf("branch %s committed %d times, want 1", item, n)
			}
		}
	})
}

// TestKit_Restart_MidFanOut_EveryBranchCommitsOnce: the engine restarts while branch c's
// handler runs, after a and b committed and with d received: c does not commit then, c and d
// come back to the new engine after their visibility timeout, and every branch commits once.
func TestKit_Restart_MidFanOut_EveryBranchCommitsOnce(t *testing.T) {
	var l ledger
	var kit *durabletest.Kit[Batch]
	restarted := false
	kit = durabletest.New(t, batchGraph(t, &l, func(item string) {
		if item == "c" && !restarted {
			restarted = true
			kit.Restart() // the process dies under this handler
		}
	}), durabletest.Options{})
	first := kit.Engine()

	kit.Start("b1", Batch{Items: []string{"a", "b", "c", "d"}})
	if !restarted || kit.Engine() == first {
		t.Fatal("the engine did not restart")
	}
	if got := kit.Final("b1").Enriched; !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("joined %q", got)
	}
	h := kit.History("b1")
	for _, item := range []string{"a", "b", "c", "d"} {
		if n := committed(t, h, "enrich", item); n != 1 {
			t.Fatalf("branch %s committed %d times, want 1", item, n)
		}
	}
	sameKeys(t, "a", l.calls("enrich:a"), 1)
	sameKeys(t, "c", l.calls("enrich:c"), 2)
	sameKeys(t, "d", l.calls("enrich:d"), 1)
}

// TestKit_Restart_BetweenDrives_RunGoesOnFromStorage: a run waiting for an event, restarted
// between two calls, is woken by the event on the new engine; so is a fan-out whose branch
// waits for its retry's back-off.
func TestKit_Restart_BetweenDrives_RunGoesOnFromStorage(t *testing.T) {
	kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
	kit.Start("t1", Ticket{Subject: "refund"})
	kit.Restart()
	if run := kit.Send("t1", "approval", Approval{OK: true}); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("after the restart: status %s", run.RuntimeStatus)
	}

	var l ledger
	bk := durabletest.New(t, batchGraph(t, &l, nil), durabletest.Options{
		Faults: map[string]int{"enrich": 1},
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second}},
	})
	if run := bk.Start("b1", Batch{Items: []string{"a", "b"}}); run.RuntimeStatus != durabletest.StatusRunning {
		t.Fatalf("the fan-out: status %s, want Running with a's retry ahead", run.RuntimeStatus)
	}
	bk.Restart()
	bk.Advance(time.Second)
	if got := bk.Final("b1").Enriched; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("joined %q", got)
	}
	if n := committed(t, bk.History("b1"), "enrich", "a"); n != 1 {
		t.Fatalf("branch a committed %d times, want 1", n)
	}
}

// TestKit_WorkerFaults_RefuseWhatCannotFire: a fault on a node no graph of the kit has, or a
// negative count, fails the test naming it.
func TestKit_WorkerFaults_RefuseWhatCannotFire(t *testing.T) {
	var l ledger
	for _, tt := range []struct {
		arm  func(*durabletest.Kit[Order])
		want string
	}{
		{func(k *durabletest.Kit[Order]) { k.CrashAfterHandler("chrage", 1) }, `CrashAfterHandler("chrage", 1): no graph of the kit has a node "chrage"`},
		{func(k *durabletest.Kit[Order]) { k.LoseReply("charge", -1) }, `LoseReply("charge", -1): options: negative value`},
		{func(k *durabletest.Kit[Order]) { k.DuplicateDelivery("x", 1) }, `DuplicateDelivery("x", 1)`},
		{func(k *durabletest.Kit[Order]) { k.ConcurrentDelivery("x", 1) }, `ConcurrentDelivery("x", 1)`},
	} {
		tb := &fatalRecorder{TB: t}
		kit := durabletest.New(tb, orderGraph(t, &l), durabletest.Options{})
		tb.on(func() { tt.arm(kit) })
		if len(tb.failures) != 1 || !strings.Contains(tb.failures[0], tt.want) {
			t.Errorf("failures %q, want one with %q", tb.failures, tt.want)
		}
	}
}

// TestKit_WorkerFaults_SeededMix_EveryBranchCommitsOnce: every fault at once on a fan-out's
// branches — failed attempts retried, crashes, a concurrent and duplicate deliveries, lost
// replies (a retry's record among them) — in seeded branch orders: each branch commits once,
// every call of a branch's handler has the branch's one key, and the join sees each item once.
func TestKit_WorkerFaults_SeededMix_EveryBranchCommitsOnce(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e", "f"}
	for seed := int64(1); seed <= 8; seed++ {
		var l ledger
		kit := durabletest.New(t, batchGraph(t, &l, nil), durabletest.Options{
			ShuffleSeed: seed,
			Faults:      map[string]int{"enrich": 2},
			Policy:      durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}},
		})
		kit.LoseReply("enrich", 2) // the first two commits are the injected failures' retry records
		kit.CrashAfterHandler("enrich", 2)
		kit.ConcurrentDelivery("enrich", 1)
		kit.DuplicateDelivery("enrich", 2)
		kit.Start("b1", Batch{Items: items})
		kit.Advance(time.Hour)
		if got := kit.Final("b1").Enriched; !slices.Equal(got, items) {
			t.Fatalf("seed %d: joined %q", seed, got)
		}
		h := kit.History("b1")
		calls := 0
		for _, item := range items {
			if n := committed(t, h, "enrich", item); n != 1 {
				t.Fatalf("seed %d: branch %s committed %d times, want 1", seed, item, n)
			}
			keys := l.calls("enrich:" + item)
			sameKeys(t, item, keys, len(keys))
			calls += len(keys)
		}
		// One fault a commit, in arm order: the lost replies take the two retry records; then 6
		// branches run, 2 of them again after a crash and 1 on a concurrent copy (the
		// duplicates' copies run the handler again if the fan-out is still open).
		if calls < len(items)+2+1 {
			t.Fatalf("seed %d: %d calls of enrich: a fault did not fire", seed, calls)
		}
	}
}

// TestKit_CrashAfterHandler_WaitAndRetryRecord: a crash fires at any commit of a handler's
// return: a step whose route waits commits its wait once, and a failed attempt whose retry
// record dies with the worker leaves no retry in the history: the attempt runs again.
func TestKit_CrashAfterHandler_WaitAndRetryRecord(t *testing.T) {
	t.Run("a route that waits", func(t *testing.T) {
		kit := durabletest.New(t, ticketGraph(), durabletest.Options{})
		kit.CrashAfterHandler("triage", 1)
		start := kit.Now()
		run := kit.Start("t1", Ticket{Subject: "refund"})
		if ev, ok := run.WaitingFor(); !ok || ev != "approval" {
			t.Fatalf("waiting for %q, %v", ev, ok)
		}
		if got := kit.Now().Sub(start); got != engine.DefaultVisibilityTimeout {
			t.Fatalf("the clock moved %s: the crash did not fire", got)
		}
		if run := kit.Send("t1", "approval", Approval{OK: true}); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("status %s", run.RuntimeStatus)
		}
		h := kit.History("t1")
		waits := 0
		for _, ev := range h {
			if ev.Type == durabletest.HistoryWaitStarted {
				waits++
			}
		}
		if n := committed(t, h, "triage", ""); n != 1 || waits != 1 {
			t.Fatalf("triage committed %d times, %d waits started; want 1 each", n, waits)
		}
	})
	t.Run("a retry's record", func(t *testing.T) {
		var l ledger
		kit := durabletest.New(t, orderGraph(t, &l), durabletest.Options{
			Faults: map[string]int{"charge": 1},
			Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second}},
		})
		kit.CrashAfterHandler("charge", 1) // the first return is the injected failure
		if run := kit.Start("o1", Order{ID: "o1"}); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("status %s", run.RuntimeStatus)
		}
		sameKeys(t, "charge", l.calls("charge"), 1)
		for _, ev := range kit.History("o1") {
			if ev.Type == durabletest.HistoryNodeRetryScheduled {
				t.Fatalf("row %d: a retry the dead worker never committed", ev.Sequence)
			}
		}
	})
}
