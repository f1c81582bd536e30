package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// feedAll reads a run's feed from after to its current end, page by page, checking that
// sequence numbers strictly increase and that each page continues where the last ended.
func feedAll(t *testing.T, e *engine.Engine, id string, after int64) ([]engine.HistoryEvent, engine.FeedPage) {
	t.Helper()
	var out []engine.HistoryEvent
	for range 1000 {
		page, err := e.Feed(t.Context(), id, engine.FeedQuery{After: after})
		if err != nil {
			t.Fatalf("Feed(%s, after %d): %v", id, after, err)
		}
		for _, it := range page.Items {
			if it.Sequence <= after {
				t.Fatalf("item %d not after %d", it.Sequence, after)
			}
			after = it.Sequence
		}
		if page.NextAfter < after {
			t.Fatalf("next_after %d behind the last item %d", page.NextAfter, after)
		}
		after = page.NextAfter
		out = append(out, page.Items...)
		if len(page.Items) == 0 {
			return out, page
		}
	}
	t.Fatal("feed never ended")
	return nil, engine.FeedPage{}
}

// sameEvents compares feed items with history rows field by field.
func sameEvents(t *testing.T, got, want []engine.HistoryEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("feed has %d items, history %d rows", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Sequence != w.Sequence || g.Type != w.Type || g.Name != w.Name || g.Node != w.Node ||
			!g.Timestamp.Equal(w.Timestamp) || string(g.Data) != string(w.Data) {
			t.Fatalf("item %d = %+v, history row %+v", i, g, w)
		}
	}
}

func TestEngine_Feed_FromStartIsTheHistory(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "support_agent", "", `{"user_message":"I want a refund"}`)
	r.wait(t, id)
	items, last := feedAll(t, r.e, id, 0)
	sameEvents(t, items, r.history(t, id))
	if last.Status != engine.StatusRunning || last.End || items[len(items)-1].Type != engine.HistoryWaitStarted {
		t.Fatalf("last page %+v, last item %s: want Running, not ended, at wait_started", last, items[len(items)-1].Type)
	}
	if last.NextAfter != items[len(items)-1].Sequence {
		t.Fatalf("next_after %d, want the last item's %d", last.NextAfter, items[len(items)-1].Sequence)
	}
}

// TestEngine_Feed_ReadsOnePageAfterThePosition: each answer is one head read and one range
// query starting right after the client's position, at most FeedPageSize rows.
func TestEngine_Feed_ReadsOnePageAfterThePosition(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{MaxSteps: 1000}, false, loopGraph(t, "feedloop"))
	id := r.start(t, "feedloop", "", `{"limit":120}`)
	r.drive(t)
	var queries []engine.Query // no goroutine of the engine's runs: the hooks are the test's
	r.fstore.BeforeQuery = func(q engine.Query) error {
		if q.PartitionKey == id {
			queries = append(queries, q)
		}
		return nil
	}
	var after int64
	pages := 0
	for {
		r.counts.Reset()
		queries = nil
		page, err := r.e.Feed(t.Context(), id, engine.FeedQuery{After: after, Wait: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.counts.Gets.Load(); got != 1 {
			t.Fatalf("page %d read %d rows by key, want the head once", pages, got)
		}
		if len(page.Items) > engine.FeedPageSize {
			t.Fatalf("page of %d items", len(page.Items))
		}
		if len(page.Items) == 0 {
			if !page.End || len(queries) != 0 {
				t.Fatalf("the finished run's last answer %+v after %d queries, want End at once", page, len(queries))
			}
			break
		}
		if len(queries) != 1 || !strings.HasSuffix(queries[0].RowKeyFrom, "-"+pad16(after+1)) || queries[0].Limit != engine.FeedPageSize {
			t.Fatalf("page %d: queries %+v, want one from seq %d of at most %d rows", pages, queries, after+1, engine.FeedPageSize)
		}
		after = page.NextAfter
		pages++
	}
	if h := r.history(t, id); pages != (len(h)+engine.FeedPageSize-1)/engine.FeedPageSize || after != h[len(h)-1].Sequence {
		t.Fatalf("%d pages up to %d for %d rows", pages, after, len(h))
	}
}

// pad16 is n as the 16 digits of a history row key.
func pad16(n int64) string { return fmt.Sprintf("%016d", n) }

// TestEngine_Feed_WaitAnswersWhenTheRunMoves: a feed at the end of a waiting run answers with
// the event once it is raised: not before (its items are the event's), and well before its
// bound. The engine that stores the event wakes it: it polls the head only every hour.
func TestEngine_Feed_WaitAnswersWhenTheRunMoves(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{FeedPollInterval: time.Hour}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t) // no goroutine of the engine's runs: the hooks are the test's
	_, last := feedAll(t, r.e, id, 0)
	var raised atomic.Bool
	waiting := make(chan struct{}, 1)
	r.fstore.BeforeGet = func(pk, rk string) error {
		if pk == id && rk == "r" {
			select {
			case waiting <- struct{}{}:
			default:
			}
		}
		return nil
	}
	type answer struct {
		page     engine.FeedPage
		err      error
		afterRun bool
		took     time.Duration
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		page, err := r.e.Feed(context.Background(), id, engine.FeedQuery{After: last.NextAfter, Wait: 15 * time.Second})
		done <- answer{page, err, raised.Load(), time.Since(start)}
	}()
	<-waiting // the feed read the head and found nothing newer
	select {
	case a := <-done:
		t.Fatalf("the feed answered before the event: %+v", a)
	default:
	}
	raised.Store(true)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"ann"}`)); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil || !a.afterRun || len(a.page.Items) == 0 || a.page.Items[0].Type != engine.HistoryEventReceived {
		t.Fatalf("answer %+v (after the event: %v), want the event_received row", a.page, a.afterRun)
	}
	if a.took >= 10*time.Second {
		t.Fatalf("answered after %s, the bound is 15 s", a.took)
	}
}

// TestEngine_Feed_OtherInstanceProgress_SeenByPolling: a feed served by an engine that does
// not run the run (another instance on the same store) sees its progress by reading the head,
// about once a second: the reads it made are bounded by the time it waited.
func TestEngine_Feed_OtherInstanceProgress_SeenByPolling(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.wait(t, id)
	var reads atomic.Int64
	other, err := engine.New(engine.Options{Registry: r.reg, Store: countGets{r.fstore, id, &reads}, Queue: r.fqueue, Payloads: r.payloads, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	_, last := feedAll(t, other, id, 0)
	reads.Store(0)
	done := make(chan engine.FeedPage, 1)
	start := time.Now()
	go func() {
		page, err := other.Feed(context.Background(), id, engine.FeedQuery{After: last.NextAfter, Wait: 15 * time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- page
	}()
	for reads.Load() < 2 { // the feed has waited one poll
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved":true,"reviewer":"ann"}`)); err != nil {
		t.Fatal(err)
	}
	page := <-done
	took := time.Since(start)
	if len(page.Items) == 0 || page.Items[0].Type != engine.HistoryEventReceived {
		t.Fatalf("page %+v, want the event", page)
	}
	if max := int64(took/engine.DefaultFeedPollInterval) + 2; reads.Load() > max {
		t.Fatalf("%d head reads in %s of waiting, want at most %d", reads.Load(), took, max)
	}
}

// countGets counts the reads of one run's head.
type countGets struct {
	engine.Store
	id string
	n  *atomic.Int64
}

func (s countGets) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	if pk == s.id && rk == "r" {
		s.n.Add(1)
	}
	return s.Store.Get(ctx, pk, rk)
}

// TestEngine_Feed_WaitIgnoresOtherRuns: the commits of other runs do not wake a waiting feed
// (each wake would be a read of its head): waiting 1.5 s with no poll due, it reads the head
// when it starts and when its wait ends, however many steps other runs commit meanwhile.
func TestEngine_Feed_WaitIgnoresOtherRuns(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{MaxSteps: 1000, FeedPollInterval: time.Hour}, false, loopGraph(t, "busy"))
	var (
		watched atomic.Value // the waiting run's id
		reads   atomic.Int64
	)
	r.fstore.BeforeGet = func(pk, rk string) error { // set before the engine's goroutines start
		if pk == watched.Load() && rk == "r" {
			reads.Add(1)
		}
		return nil
	}
	if err := r.e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.wait(t, id)
	_, last := feedAll(t, r.e, id, 0)
	watched.Store(id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		page, err := r.e.Feed(context.Background(), id, engine.FeedQuery{After: last.NextAfter, Wait: 1500 * time.Millisecond})
		if err != nil || len(page.Items) != 0 {
			t.Errorf("page %+v, %v: want nothing new", page, err)
		}
	}()
	for reads.Load() == 0 { // the feed is waiting
		time.Sleep(time.Millisecond)
	}
	for range 3 {
		busy := r.start(t, "busy", "", `{"limit":30}`)
		r.waitFor(t, busy, func(run engine.Run) bool { return run.RuntimeStatus.Finished() })
	}
	<-done
	// 2: when the wait starts and when it ends; a third may be the waiting run's own worker
	// finishing its step after WaitRun saw it settle (on a loaded machine). A wake per commit
	// of the other runs would be 90 more.
	if n := reads.Load(); n < 2 || n > 3 {
		t.Fatalf("%d reads of the waiting run's head while other runs committed 90 steps, want 2 (3 at most)", n)
	}
}

func TestEngine_Feed_FinishedRunAnswersAtOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, true)
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/data"}`)
	r.waitFor(t, id, func(run engine.Run) bool { return run.RuntimeStatus.Finished() })
	_, last := feedAll(t, r.e, id, 0)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	page, err := r.e.Feed(ctx, id, engine.FeedQuery{After: last.NextAfter, Wait: time.Hour})
	if err != nil || !page.End || len(page.Items) != 0 || page.Status != engine.StatusCompleted || page.NextAfter != last.NextAfter {
		t.Fatalf("Feed at the end of a finished run = %+v, %v; want End at once", page, err)
	}
	// From the start, the page holding the last row says End.
	page, err = r.e.Feed(ctx, id, engine.FeedQuery{})
	if err != nil || !page.End || page.Items[len(page.Items)-1].Type != engine.HistoryRunCompleted {
		t.Fatalf("Feed from 0 = %+v, %v", page, err)
	}
}

func TestEngine_Feed_Errors(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "data_pipeline", "", `{"source_url":"u"}`)
	for _, tt := range []struct {
		name string
		id   string
		q    engine.FeedQuery
		want error
	}{
		{"unknown run", "nope", engine.FeedQuery{Wait: time.Hour}, engine.ErrRunNotFound},
		{"invalid id", "a/b", engine.FeedQuery{}, engine.ErrRunNotFound},
		{"negative after", id, engine.FeedQuery{After: -1}, engine.ErrInvalidQuery},
		{"negative wait", id, engine.FeedQuery{Wait: -time.Second}, engine.ErrInvalidQuery},
	} {
		if _, err := r.e.Feed(t.Context(), tt.id, tt.q); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// A client that leaves ends the wait with its context's error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.e.Feed(ctx, id, engine.FeedQuery{After: 100, Wait: time.Hour}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// One feed answer ends after the item whose data reaches FeedPageBytes (4 MiB), far below
// FeedPageSize items: a step that emitted six events of 900 KiB is read in two answers, the
// first ending with the fifth event (4.5 MiB), the second going on with the sixth.
func TestEngine_Feed_PageEndsAfterTheItemThatReachesItsByteBound(t *testing.T) {
	t.Parallel()
	const events, size = 6, 900 << 10
	blob := strings.Repeat("x", size)
	g := chainGraph(t, "bulky", 2, func(ctx context.Context, s counterState) (any, error) {
		if s.N == 0 {
			for range events {
				if err := durable.Emit(ctx, "bulk", blob); err != nil {
					return nil, err
				}
			}
		}
		return durable.Update{"n": s.N + 1}, nil
	})
	r := newRig(t, engine.Options{}, false, g)
	id := r.start(t, "bulky", "", `{}`)
	r.drive(t)
	page, err := r.e.Feed(t.Context(), id, engine.FeedQuery{})
	if err != nil {
		t.Fatal(err)
	}
	bytes, customs := 0, 0
	for _, it := range page.Items {
		bytes += len(it.Data)
		if it.Type == engine.HistoryCustom {
			customs++
		}
	}
	last := page.Items[len(page.Items)-1]
	if customs != 5 || last.Type != engine.HistoryCustom || page.NextAfter != last.Sequence || page.End {
		t.Fatalf("first answer: %d items, %d bytes, %d emitted events, last %s at %d, next_after %d, end %v; want it to end with the fifth event",
			len(page.Items), bytes, customs, last.Type, last.Sequence, page.NextAfter, page.End)
	}
	if bytes-len(last.Data) >= engine.FeedPageBytes || bytes < engine.FeedPageBytes {
		t.Fatalf("first answer holds %d bytes: the item before its last already reached %d, or none did", bytes, engine.FeedPageBytes)
	}
	rest, err := r.e.Feed(t.Context(), id, engine.FeedQuery{After: page.NextAfter})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Items) == 0 || rest.Items[0].Type != engine.HistoryCustom || rest.Items[0].Sequence != last.Sequence+1 {
		t.Fatalf("second answer starts with %+v, want the sixth event", rest.Items[:min(1, len(rest.Items))])
	}
	items, _ := feedAll(t, r.e, id, 0)
	sameEvents(t, items, r.history(t, id))
}

// A feed position belongs to one run of its id: an answer names its run (FeedPage.Run), and a
// position of a run that was replaced by a new start of the id — or purged, and the id started
// again — is refused (ErrFeedRunReplaced, an ErrInvalidQuery), never taken for the new run,
// whose sequence numbers start again at 1. From After 0 and no Run the new run is read whole;
// its own positions work.
func TestEngine_Feed_PositionOfAnotherRunOfTheIDRefused(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"replaced", "purged"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, engine.Options{}, false)
			id := r.start(t, "data_pipeline", "again", pipelineInput)
			r.drive(t)
			items, old := feedAll(t, r.e, id, 0)
			if old.Run == "" || len(items) < 4 {
				t.Fatalf("the first run's feed: %d items, run %q", len(items), old.Run)
			}
			mid, err := r.e.Feed(t.Context(), id, engine.FeedQuery{After: 2})
			if err != nil || mid.Run != old.Run {
				t.Fatalf("a page of the first run names run %q (%v), another %q", mid.Run, err, old.Run)
			}
			if how == "purged" {
				if err := r.e.PurgeRun(t.Context(), id); err != nil {
					t.Fatal(err)
				}
			}
			r.start(t, "data_pipeline", id, pipelineInput)
			r.drive(t)
			for _, q := range []engine.FeedQuery{{After: 2, Run: old.Run}, {After: 0, Run: old.Run}, {After: 2, Run: old.Run, Wait: time.Hour}} {
				page, err := r.e.Feed(t.Context(), id, q)
				if !errors.Is(err, engine.ErrFeedRunReplaced) || !errors.Is(err, engine.ErrInvalidQuery) {
					t.Fatalf("Feed(%+v) after the run was %s = %d items, %v; want ErrFeedRunReplaced", q, how, len(page.Items), err)
				}
			}
			again, last := feedAll(t, r.e, id, 0)
			if last.Run == "" || last.Run == old.Run {
				t.Fatalf("the new run's feed names run %q, the old one's %q", last.Run, old.Run)
			}
			sameEvents(t, again, r.history(t, id))
			page, err := r.e.Feed(t.Context(), id, engine.FeedQuery{After: 2, Run: last.Run})
			if err != nil || len(page.Items) == 0 || page.Items[0].Sequence != 3 || page.Run != last.Run {
				t.Fatalf("the new run's own position: %+v, %v", page, err)
			}
		})
	}
}

// gatedGets holds every read of one run's head after the first n until gate is closed.
type gatedGets struct {
	engine.Store
	id    string
	n     int64
	reads *atomic.Int64
	gate  chan struct{}
}

func (s gatedGets) Get(ctx context.Context, pk, rk string) (engine.Entity, error) {
	if pk == s.id && rk == "r" && s.reads.Add(1) > s.n {
		<-s.gate
	}
	return s.Store.Get(ctx, pk, rk)
}

// A feed that waits, with no Run named, stays in the run it first read: when the run ends
// and a new start of the id replaces it between two of its polls, the feed refuses to go on
// in the new run (ErrFeedRunReplaced) instead of answering the new run's rows as if they
// followed the old position.
func TestEngine_Feed_WaitingFeedStaysInItsRun(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	id := r.start(t, "support_agent", "", `{"user_message":"refund"}`)
	r.drive(t)
	_, last := feedAll(t, r.e, id, 0)
	var reads atomic.Int64
	gate := make(chan struct{})
	other, err := engine.New(engine.Options{Registry: r.reg, Store: gatedGets{r.fstore, id, 1, &reads, gate}, Queue: r.fqueue, Payloads: r.payloads,
		Logger: quiet, FeedPollInterval: 10 * time.Millisecond, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	done := make(chan error, 1)
	go func() {
		page, err := other.Feed(context.Background(), id, engine.FeedQuery{After: last.NextAfter, Wait: 15 * time.Second})
		if err == nil {
			err = fmt.Errorf("answered %d items, end %v, run %q (the old run's %q)", len(page.Items), page.End, page.Run, last.Run)
		}
		done <- err
	}()
	for reads.Load() < 2 { // the feed read the head, waited, and its poll is held
		time.Sleep(time.Millisecond)
	}
	if err := r.e.CancelRun(t.Context(), id, "replaced"); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	r.start(t, "data_pipeline", id, pipelineInput) // more rows than the old run had
	r.drive(t)
	close(gate)
	if err := <-done; !errors.Is(err, engine.ErrFeedRunReplaced) {
		t.Fatalf("the waiting feed after its run was replaced: %v, want ErrFeedRunReplaced", err)
	}
}
