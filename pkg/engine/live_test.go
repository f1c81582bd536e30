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
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// liveStores are one set of memory stores two engines (two instances) share.
type liveStores struct {
	store    *memory.Store
	queue    *memory.Queue
	payloads *memory.PayloadStore
	live     *memory.LiveStore
}

func newLiveStores() *liveStores {
	return &liveStores{memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore(), memory.NewLiveStore()}
}

// engine returns an engine on s with g registered; start runs its dispatcher.
func (s *liveStores) engine(t *testing.T, g durable.Graph, start bool, opts engine.Options) *engine.Engine {
	t.Helper()
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	opts.Registry, opts.Store, opts.Queue, opts.Payloads, opts.Live = reg, s.store, s.queue, s.payloads, s.live
	opts.Logger, opts.PollInterval = testLogger(t), 5*time.Millisecond
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if start {
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// tokenNode writes tokens "t0".."t<n-1>" as chunks named "token", waiting for release after
// the first half; with failFirst its first attempt fails after the first half.
func tokenNode(n int, release <-chan struct{}, failFirst bool) durable.NodeFunc[counterState] {
	var attempts atomic.Int32
	return func(ctx context.Context, s counterState) (any, error) {
		a := attempts.Add(1)
		for i := range n {
			if i == n/2 {
				if failFirst && a == 1 {
					return nil, errors.New("model overloaded")
				}
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if err := durable.Write(ctx, "token", fmt.Sprintf("a%d-t%d", a, i)); err != nil {
				return nil, err
			}
		}
		return durable.Update{"n": s.N + 1}, nil
	}
}

// liveFollow reads the run's feed with its live channel from (after, liveAfter) until the
// run's end or until stop says so, and returns the live records and history items it saw.
func liveFollow(t *testing.T, e *engine.Engine, id string, liveAfter int64, stop func([]engine.LiveRecord) bool) ([]engine.LiveRecord, []engine.HistoryEvent, int64) {
	t.Helper()
	var (
		recs  []engine.LiveRecord
		items []engine.HistoryEvent
		after int64
		run   string
	)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		page, err := e.Feed(ctx, id, engine.FeedQuery{After: after, Run: run, Wait: 5 * time.Second, Live: true, LiveAfter: liveAfter})
		if err != nil {
			t.Fatalf("feed: %v", err)
		}
		recs, items = append(recs, page.Live...), append(items, page.Items...)
		after, run, liveAfter = page.NextAfter, page.Run, page.LiveNext
		if page.End || (stop != nil && stop(recs)) {
			return recs, items, liveAfter
		}
	}
}

// chunkNames returns "kind:data" of recs (data unquoted), writers named w<n> by first appearance.
func chunkNames(recs []engine.LiveRecord) string {
	writers := map[string]string{}
	var out []string
	for _, r := range recs {
		w, ok := writers[r.Writer]
		if !ok {
			w = fmt.Sprintf("w%d", len(writers)+1)
			writers[r.Writer] = w
		}
		switch r.Kind {
		case engine.LiveChunk:
			var s string
			_ = json.Unmarshal(r.Data, &s)
			out = append(out, s)
		default:
			out = append(out, r.Kind+":"+w)
		}
	}
	return strings.Join(out, " ")
}

func countChunks(recs []engine.LiveRecord) int {
	n := 0
	for _, r := range recs {
		if r.Kind == engine.LiveChunk {
			n++
		}
	}
	return n
}

// TestEngine_Live_ChunksSeenBeforeTheStepCommits_OnAnotherInstance: a node writing tokens is
// read by a feed on another engine over the same stores while the node still runs (its
// commit not landed), every token in order, then the step's commit record.
func TestEngine_Live_ChunksSeenBeforeTheStepCommits_OnAnotherInstance(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	g := chainGraph(t, "tokens", 1, tokenNode(20, release, false))
	s := newLiveStores()
	worker := s.engine(t, g, true, engine.Options{})
	reader := s.engine(t, g, false, engine.Options{LivePollInterval: 10 * time.Millisecond})
	if _, err := worker.StartRun(t.Context(), engine.StartRunRequest{GraphName: "tokens", InstanceID: "live-1", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	early, items, next := liveFollow(t, reader, "live-1", 0, func(r []engine.LiveRecord) bool { return countChunks(r) >= 10 })
	for _, it := range items {
		if it.Type == engine.HistoryNodeCompleted {
			t.Fatalf("the node committed before its first half was read: the chunks were not live")
		}
	}
	close(release)
	rest, _, _ := liveFollow(t, reader, "live-1", next, nil)
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("a1-t%d", i))
	}
	if got := chunkNames(append(early, rest...)); got != strings.Join(want, " ")+" commit:w1" {
		t.Fatalf("live records:\n%s\nwant the 20 tokens in order, then the commit", got)
	}
	for i, r := range append(early, rest...) {
		if r.Step != 1 || r.Branch != -1 || (r.Kind == engine.LiveChunk && (r.Attempt != 1 || r.Node != "n0" || r.Seq != i+1)) {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
}

// TestEngine_Live_ResumeFromAnOffset_NoDuplicate: a reader that stops and resumes from the
// LiveNext it had gets the rest, each record once.
func TestEngine_Live_ResumeFromAnOffset_NoDuplicate(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	g := chainGraph(t, "tokens", 2, tokenNode(30, release, false))
	s := newLiveStores()
	e := s.engine(t, g, true, engine.Options{})
	if _, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "tokens", InstanceID: "live-2", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	all, _, _ := liveFollow(t, e, "live-2", 0, nil)
	if countChunks(all) != 60 {
		t.Fatalf("%d chunks, want 60: %s", countChunks(all), chunkNames(all))
	}
	for cut := range all {
		rest, _, _ := liveFollow(t, e, "live-2", all[cut].Next, nil)
		if got, want := chunkNames(rest), chunkNames(all[cut+1:]); got != want {
			t.Fatalf("resumed after record %d:\n%s\nwant\n%s", cut, got, want)
		}
	}
}

// TestEngine_Live_FailedAttemptRetracted: the chunks of an attempt that failed are followed
// by its retract record; the retry's chunks by its commit.
func TestEngine_Live_FailedAttemptRetracted(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	g := chainGraph(t, "flaky", 1, tokenNode(6, release, true))
	s := newLiveStores()
	e := s.engine(t, g, true, engine.Options{Policies: map[string]engine.GraphPolicy{
		"flaky": {Retry: engine.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}}})
	if _, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "flaky", InstanceID: "live-3", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := liveFollow(t, e, "live-3", 0, nil)
	if got, want := chunkNames(recs), "a1-t0 a1-t1 a1-t2 retract:w1 a2-t0 a2-t1 a2-t2 a2-t3 a2-t4 a2-t5 commit:w2"; got != want {
		t.Fatalf("live records:\n%s\nwant\n%s", got, want)
	}
	if recs[len(recs)-2].Attempt != 2 {
		t.Fatalf("the retry's chunks carry attempt %d, want 2", recs[len(recs)-2].Attempt)
	}
}

// countingLive counts a LiveStore's appends.
type countingLive struct {
	engine.LiveStore
	appends atomic.Int64
}

func (c *countingLive) Append(ctx context.Context, key string, at int64, data []byte) (int64, error) {
	c.appends.Add(1)
	return c.LiveStore.Append(ctx, key, at, data)
}

// TestEngine_Live_Coalesced: a step writing many chunks quickly costs a few appends, not one
// per chunk: the first at once, the rest together before the commit, then the commit record.
func TestEngine_Live_Coalesced(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	g := chainGraph(t, "burst", 1, tokenNode(500, release, false))
	s := newLiveStores()
	counted := &countingLive{LiveStore: s.live}
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Registry: reg, Store: s.store, Queue: s.queue, Payloads: s.payloads, Live: counted,
		Logger: testLogger(t), LiveFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if _, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "burst", InstanceID: "live-4", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := liveFollow(t, e, "live-4", 0, nil)
	if countChunks(recs) != 500 {
		t.Fatalf("%d chunks, want 500", countChunks(recs))
	}
	if n := counted.appends.Load(); n != 3 {
		t.Fatalf("%d appends for 500 chunks, want 3 (the first, the rest before the commit, the commit record)", n)
	}
}

// TestEngine_Live_NoChannel_WriteDoesNothing: on an engine without a live channel a node's
// Write is accepted and the run goes on.
func TestEngine_Live_NoChannel_WriteDoesNothing(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	r := newRig(t, engine.Options{}, false, chainGraph(t, "quiet-tokens", 1, tokenNode(4, release, false)))
	id := r.start(t, "quiet-tokens", "", `{}`)
	r.drive(t)
	page, err := r.e.Feed(t.Context(), id, engine.FeedQuery{Live: true})
	if err != nil || len(page.Live) != 0 || page.Status != engine.StatusCompleted {
		t.Fatalf("feed: %+v %v; want the run completed and no live records", page, err)
	}
}

// TestEngine_Live_BranchCommitSeenBeforeTheJoin: in a fan-out of two, the fast branch's
// chunk, its emitted event's preview and its commit record reach a reader while the slow
// branch is still held, long before the join; each record names its branch.
func TestEngine_Live_BranchCommitSeenBeforeTheJoin(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	work := func(ctx context.Context, s fanState) (any, error) {
		item, err := durable.BranchItem[int](ctx)
		if err != nil {
			return nil, err
		}
		if item == 2 {
			select { // the slow branch
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if err := durable.Write(ctx, "token", fmt.Sprintf("b%d", item)); err != nil {
			return nil, err
		}
		if err := durable.Emit(ctx, "progress", item); err != nil {
			return nil, err
		}
		return fanWork(ctx, s)
	}
	s := newLiveStores()
	e := s.engine(t, fanGraph(t, "livefan", work), true, engine.Options{})
	if _, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "livefan", InstanceID: "live-5", Input: json.RawMessage(`{"items":[1,2]}`)}); err != nil {
		t.Fatal(err)
	}
	early, items, next := liveFollow(t, e, "live-5", 0, func(r []engine.LiveRecord) bool {
		return len(r) > 0 && r[len(r)-1].Kind == engine.LiveCommit
	})
	for _, it := range items {
		if it.Type == engine.HistoryBranchCompleted || it.Type == engine.HistoryBranchesJoined {
			t.Fatalf("the feed showed %s before the slow branch was released", it.Type)
		}
	}
	if got := chunkNames(early); got != "b1 custom:w1 commit:w1" {
		t.Fatalf("live records before the join: %s, want the fast branch's chunk, preview and commit", got)
	}
	for _, r := range early {
		if r.Branch != 0 || r.Step != 2 {
			t.Fatalf("record %+v: want branch 0 of step 2", r)
		}
	}
	close(gate)
	rest, _, _ := liveFollow(t, e, "live-5", next, nil)
	if got := chunkNames(rest); got != "b2 custom:w1 commit:w1" {
		t.Fatalf("the slow branch's live records: %s", got)
	}
	if rest[0].Branch != 1 {
		t.Fatalf("slow branch's chunk names branch %d, want 1", rest[0].Branch)
	}
}
