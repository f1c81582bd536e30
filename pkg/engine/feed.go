package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The feed: a run's history rows after a sequence number, read as they come.
//
// A feed answer reads the head (one point read) and, when the head's HistSeq is past the
// client's position, one range query of the history rows after it: at most FeedPageSize rows,
// never the whole history. When nothing is newer and the run is unfinished, it waits: a commit,
// event or cancel this process makes on the run wakes it at once (the engine's change
// notifier, by run), and a point read of the head every Options.FeedPollInterval sees a change
// another instance made. So a waiting client costs one head read per second of waiting (at the
// default interval), and nothing while the run is finished or the client reads what is there.
//
// A position is one run's: a new start of the id (replacing the finished run, or after a
// purge) numbers its rows from 1 again. Each answer names its run (FeedPage.Run, the run's
// nonce), and a query that names a run the id no longer holds is refused, so a client's
// position is never taken for another run's.

// Feed limits.
const (
	// FeedPageSize is the most items of one feed answer.
	FeedPageSize = 100
	// FeedPageBytes bounds the data of one feed answer: it ends after the item that reaches
	// it (a single item may be larger: an emitted event of up to 1 MiB, a large state).
	FeedPageBytes = 4 << 20
	// DefaultFeedPollInterval is the default Options.FeedPollInterval: how often a waiting
	// feed reads the run's head to see the progress another instance made (this instance's
	// wakes it at once).
	DefaultFeedPollInterval = time.Second
)

// FeedQuery asks Feed for a run's history after a position.
type FeedQuery struct {
	// After is the sequence number of the last item the client has; 0 reads from the start.
	After int64
	// Run is the run After is a position in: FeedPage.Run of the answer it came from. A
	// query naming a run the id no longer holds is refused (ErrFeedRunReplaced). "" takes
	// After in the run the id holds when the query is read (a client starting out).
	Run string
	// Wait is how long to wait for a newer item when there is none and the run is
	// unfinished; 0 answers at once.
	Wait time.Duration
	// Limit is the page size; 0 or more than FeedPageSize means FeedPageSize.
	Limit int
	// Live asks for the run's live channel too (live.go), from offset LiveAfter: the
	// FeedPage.LiveNext of the answer before (0 from the start). An engine without a live
	// channel answers none.
	Live      bool
	LiveAfter int64
}

// FeedPage is one feed answer.
type FeedPage struct {
	// Status is the run's status when the page was read.
	Status RunStatus
	// Run names the run of the id the page is of (an opaque token, the same for every page
	// of one run): the FeedQuery.Run of the next query.
	Run string
	// Items are the run's history rows after the query's After, oldest first, with
	// strictly increasing Sequence (gaps are allowed), HistoryCustom rows included.
	Items []HistoryEvent
	// NextAfter is the After of the next query: the last item's sequence number, or past
	// sequence numbers that hold no row; never below the query's After.
	NextAfter int64
	// End reports that the run is finished and this page reaches its last row: nothing
	// follows NextAfter (nor LiveNext, when the query asked for the live channel).
	End bool
	// Live are the records of the run's live channel after the query's LiveAfter, oldest
	// first (FeedQuery.Live), and LiveNext the LiveAfter of the next query.
	Live     []LiveRecord
	LiveNext int64
}

// RunFeeder is an optional capability of a Runs: reading a run's history as a feed that
// waits for what comes next. The Engine implements it.
type RunFeeder interface {
	// Feed returns the run's history rows after q.After, waiting up to q.Wait for one when
	// there is none and the run is unfinished. Errors: ErrRunNotFound, ErrInvalidQuery for a
	// negative After or Wait, ErrFeedRunReplaced (an ErrInvalidQuery) when q.Run is not the
	// run the id holds, the context's error when it ends while waiting.
	Feed(ctx context.Context, instanceID string, q FeedQuery) (FeedPage, error)
}

// ErrFeedRunReplaced is Feed's answer to a query whose position is in a run the id no longer
// holds (FeedQuery.Run): that run was replaced by a new start of the id, or purged and the id
// started again, and the new run numbers its rows from 1. Read the new run from After 0 with
// no Run. It wraps ErrInvalidQuery.
var ErrFeedRunReplaced = fmt.Errorf("%w: the feed position is in another run of this instance id", ErrInvalidQuery)

var _ RunFeeder = (*Engine)(nil)

// Feed implements RunFeeder. It answers as soon as the run has rows after q.After, and at once
// for a finished run. Sequence numbers restart at 1 when a finished run is replaced by a new
// start with the same id: a query is read in the run q.Run names (or, for "", the run the id
// holds at its first read), and refused once the id holds another.
func (e *Engine) Feed(ctx context.Context, instanceID string, q FeedQuery) (FeedPage, error) {
	if !ValidInstanceID(instanceID) {
		return FeedPage{}, ErrRunNotFound
	}
	if q.After < 0 || q.Wait < 0 {
		return FeedPage{}, fmt.Errorf("%w: feed after %d, wait %s: want neither negative", ErrInvalidQuery, q.After, q.Wait)
	}
	limit := q.Limit
	if limit <= 0 || limit > FeedPageSize {
		limit = FeedPageSize
	}
	var (
		watch    *runWatch
		timer    *time.Timer
		deadline time.Time
	)
	if q.Wait > 0 {
		watch = e.changes.runs.watch(instanceID)
		defer watch.stop()
		deadline = time.Now().Add(q.Wait)
	}
	live := q.Live && e.live != nil
	var (
		liveWatch *runWatch
		liveSeen  int64 // the channel's length at the last poll
		endWait   time.Time
	)
	if live && q.Wait > 0 {
		liveWatch = e.liveSignals.watch(instanceID)
		defer liveWatch.stop()
	}
	after, run, liveAfter := q.After, q.Run, q.LiveAfter
	if q.LiveAfter < 0 {
		return FeedPage{}, fmt.Errorf("%w: feed live after %d: want 0 or more", ErrInvalidQuery, q.LiveAfter)
	}
	for {
		var changed, liveChanged <-chan struct{}
		if watch != nil {
			changed = watch.changed() // before the read: a change after it closes this channel
		}
		if liveWatch != nil {
			liveChanged = liveWatch.changed()
		}
		h, err := e.getHead(ctx, instanceID)
		if err != nil {
			return FeedPage{}, runLookupError(err)
		}
		if run == "" {
			run = h.nonce
		}
		if h.nonce != run {
			return FeedPage{}, fmt.Errorf("feed run=%s after=%d: %w", instanceID, after, ErrFeedRunReplaced)
		}
		page := FeedPage{Status: h.status, Run: run, NextAfter: after, End: !h.active()}
		if end := feedHorizon(h); end > after {
			if page, err = e.feedPage(ctx, h, after, end, limit); err != nil {
				return FeedPage{}, err
			}
			after = page.NextAfter // past rows no history holds, should the page be empty
		}
		page.LiveNext = liveAfter
		if live {
			if page.Live, page.LiveNext, err = e.liveRead(ctx, h, liveAfter); err != nil {
				return FeedPage{}, err
			}
			liveAfter, liveSeen = page.LiveNext, page.LiveNext
			if page.End && (endWait.IsZero() || time.Now().Before(endWait)) {
				// The run's last writer appends its end record just after its commit: a log
				// that ends with a chunk is waited on, up to liveEndWait (a query that does
				// not wait is answered at once, not at its end).
				dangling, err := e.liveTailOpen(ctx, h, page.LiveNext)
				if err != nil {
					return FeedPage{}, err
				}
				if dangling {
					if endWait.IsZero() {
						endWait = time.Now().Add(liveEndWait)
					}
					page.End = false
				}
			}
		}
		if len(page.Items) > 0 || len(page.Live) > 0 || page.End || watch == nil {
			return page, nil
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return page, nil
		}
		if err := e.feedWait(ctx, h, live, liveSeen, remaining, &timer, changed, liveChanged); err != nil {
			return FeedPage{}, fmt.Errorf("feed run=%s: %w", instanceID, err)
		}
	}
}

// feedWait waits for the next reason to read again: a change this process made to the run or
// its live channel, FeedPollInterval (another instance's commit), or, with live, a poll every
// LivePollInterval that finds the channel longer than seen (another instance's append).
func (e *Engine) feedWait(ctx context.Context, h *head, live bool, seen int64, remaining time.Duration, timer **time.Timer,
	changed, liveChanged <-chan struct{}) error {
	wait := min(e.opts.FeedPollInterval, remaining)
	if *timer == nil {
		*timer = time.NewTimer(wait)
	} else {
		(*timer).Reset(wait)
	}
	defer (*timer).Stop()
	var poll <-chan time.Time
	if live {
		t := time.NewTicker(e.opts.LivePollInterval)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
			return nil
		case <-liveChanged:
			return nil
		case <-(*timer).C:
			return nil
		case <-poll:
			if n, err := e.liveLength(ctx, h); err != nil || n > seen {
				return nil // read again; a failed poll is left to the read to report
			}
		}
	}
}

// feedPage reads the rows of h's generation after after, up to end (a sequence number the
// feed may show, feedHorizon): one query of at most limit rows (another only when the store
// answers with a short page and a continuation).
func (e *Engine) feedPage(ctx context.Context, h *head, after, end int64, limit int) (FeedPage, error) {
	page := FeedPage{Status: h.status, Run: h.nonce, NextAfter: after}
	q := Query{PartitionKey: h.runID, RowKeyFrom: histKey(h.gen, after+1), RowKeyTo: histKey(h.gen, end+1), Limit: limit}
	size := 0
	for {
		res, err := e.store.Query(ctx, q)
		if err != nil {
			return FeedPage{}, fmt.Errorf("query feed run=%s after=%d: %w", h.runID, after, err)
		}
		for _, ent := range res.Entities {
			ev, err := e.historyEvent(ctx, ent)
			if err != nil {
				return FeedPage{}, err
			}
			page.Items = append(page.Items, ev)
			page.NextAfter = ev.Sequence
			if size += len(ev.Data); len(page.Items) == limit || size >= FeedPageBytes {
				return page, nil
			}
		}
		if res.Continuation == "" {
			break
		}
		q.Continuation = res.Continuation
	}
	page.NextAfter, page.End = end, !h.active()
	return page, nil
}

// feedHorizon returns the last sequence number a feed may show of h: its HistSeq, or, while a
// parallel-branch region is open, the one before the region's first. The branches write the
// region's rows each on its own, and a client must not move past a slot a branch has yet to
// fill: the region's rows, and any after it, show once the join closes it.
func feedHorizon(h *head) int64 {
	if first, open := openBranchRegionStart(h); open {
		return min(h.histSeq, first-1)
	}
	return h.histSeq
}

// openBranchRegionStart returns the first sequence number of the branch region h holds open
// (a fan-out whose join has not committed), and whether it holds one.
func openBranchRegionStart(h *head) (first int64, open bool) { return h.branchBase, h.branchCount > 0 }

// runSignals wakes the feeds waiting on a run when this process changes it. It costs an
// atomic load per change while no feed waits.
type runSignals struct {
	waiting atomic.Int32 // feeds registered
	mu      sync.Mutex
	runs    map[string]*runSignal // guarded by mu
}

// runSignal is one run's signal: ch is closed on the run's next change.
type runSignal struct {
	ch    chan struct{} // guarded by runSignals.mu; nil until a feed asks
	feeds int           // guarded by runSignals.mu
}

// runWatch is one waiting feed's registration.
type runWatch struct {
	s     *runSignals
	runID string
	sig   *runSignal
}

// watch registers a feed waiting on runID; stop ends it.
func (s *runSignals) watch(runID string) *runWatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[string]*runSignal{}
	}
	sig := s.runs[runID]
	if sig == nil {
		sig = &runSignal{}
		s.runs[runID] = sig
	}
	sig.feeds++
	s.waiting.Add(1)
	return &runWatch{s: s, runID: runID, sig: sig}
}

// changed returns a channel closed on the run's next change.
func (w *runWatch) changed() <-chan struct{} {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.sig.ch == nil {
		w.sig.ch = make(chan struct{})
	}
	return w.sig.ch
}

// stop ends the registration.
func (w *runWatch) stop() {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.sig.feeds--; w.sig.feeds == 0 {
		delete(w.s.runs, w.runID)
	}
	w.s.waiting.Add(-1)
}

// notify wakes the feeds waiting on runID.
func (s *runSignals) notify(runID string) {
	if s.waiting.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sig := s.runs[runID]; sig != nil && sig.ch != nil {
		close(sig.ch)
		sig.ch = nil
	}
}
