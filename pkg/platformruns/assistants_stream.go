package platformruns

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// A durable assistant's stream follows its run (platform.DurableStreamer): the engine's feed of
// the run, with its live channel (engine.FeedQuery.Live), from the run's start (or, for a
// resume, from the last history row before the event) until the run waits for an event or
// ends. Each feed answer gives what the run committed (history rows) and what its steps wrote
// since the answer before (live records):
//
//   - a node_completed or event_applied row is a step (its state), a branch_completed row a
//     branch's step (its result), a branches_joined row the state at the join;
//   - a chunk record is sent as it is read: chunks are not history, and this is their only way
//     to the client;
//   - an emitted event is sent once, at the first of two signs that it is final: the commit
//     record of the attempt that previewed it (held until then; a retracted attempt's
//     previews are dropped) or its custom history row. A fan-out's rows show only at its join
//     (engine.Feed), while a branch's commit record follows the branch's own commit, so a
//     branch's events reach the client when the branch commits. Matching is by name and data:
//     each sent preview cancels one custom row of the same name and data, and each sent row
//     one preview, whichever comes first, so an event dropped from the live channel (past the
//     step's bound, an append that failed) still comes, from its row, and none comes twice.
//
// Order: a node's chunks come before its rows (page), and a step's before the next step's
// rows; the rows of the step before come before a step's first chunks (one more feed read
// when an answer holds a new step's first records: the step before committed before they were
// appended, perhaps after the answer's head read). A node visited
// twice within one answer may have its second visit's chunks sent before the first visit's
// rows.
//
// Following costs the feed's waits (engine.Feed: a head read a second, a LiveStore.Length
// every 100 ms while nothing comes), one more feed read per step that writes, and a head read
// (GetRun) after an answer that may have settled the run: one that shows a wait, a run's end
// or nothing new.

// followWait is how long one feed answer waits for news.
const followWait = time.Second

var _ platform.DurableStreamer = (*Assistants)(nil)

// RunStream implements platform.DurableStreamer. An engine that is not an engine.RunFeeder
// runs Run and reports nothing before the run settles.
func (a *Assistants) RunStream(ctx context.Context, req platform.DurableRunRequest, emit func(platform.DurableEvent) error) (platform.DurableState, error) {
	feeder, ok := a.eng.(engine.RunFeeder)
	if !ok {
		return a.Run(ctx, req)
	}
	f := &follower{a: a, feeder: feeder, emit: emit, previews: map[string][]engine.LiveRecord{},
		sentPreviews: map[string]int{}, sentRows: map[string]int{}}
	if req.Resume != nil {
		id, event, last, err := a.pending(ctx, req.ThreadID)
		if err != nil {
			return platform.DurableState{}, err
		}
		f.id, f.after, f.resumedAt = id, last, last
		// What the run wrote before the event was streamed with its turn: follow from the
		// live channel's end.
		if err := f.skipLive(ctx); err != nil {
			return platform.DurableState{}, err
		}
		if err := a.deliver(ctx, id, event, req.Resume); err != nil {
			return platform.DurableState{}, err
		}
	} else {
		id, err := a.start(ctx, req)
		if err != nil {
			return platform.DurableState{}, err
		}
		f.id, f.applied, f.known = id, true, true // from the run's first row
	}
	run, err := f.follow(ctx)
	if err != nil {
		return platform.DurableState{}, err
	}
	return a.state(ctx, run)
}

// follower follows one run's feed for RunStream; one goroutine owns it.
type follower struct {
	a      *Assistants
	feeder engine.RunFeeder
	emit   func(platform.DurableEvent) error
	id     string

	after, liveAfter int64  // the feed position
	run              string // the feed's run token
	liveStep         int64  // the latest step whose chunks or previews were read
	resumedAt        int64  // a resume's last row before the event
	applied          bool   // a resume's event is applied (always, for a start)

	// state is the run's state after the rows sent (engine.FoldState); known is false until a
	// resume's follower, which starts in the middle of the history, has read the rows before.
	state json.RawMessage
	known bool

	previews     map[string][]engine.LiveRecord // emitted events' previews by writer, held until its end
	sentPreviews map[string]int                 // previews sent whose rows have not come, by eventKey
	sentRows     map[string]int                 // custom rows sent whose previews have not come
}

// follow reads the feed until the run settles (waits for an event, after a resume's event is
// applied) or ends, and returns the run as last read.
func (f *follower) follow(ctx context.Context) (engine.Run, error) {
	for settling := false; ; {
		wait := followWait
		if settling {
			wait = 0 // the run settled: read what is left, then stop
		}
		page, err := f.read(ctx, wait)
		if err != nil {
			return engine.Run{}, err
		}
		hint, err := f.page(ctx, page)
		if err != nil {
			return engine.Run{}, err
		}
		more := len(page.Items) > 0 || len(page.Live) > 0
		if settling && !more || page.End {
			return f.a.eng.GetRun(ctx, f.id)
		}
		if settling || !hint && more {
			continue
		}
		run, err := f.a.eng.GetRun(ctx, f.id)
		if err != nil {
			return engine.Run{}, fmt.Errorf("follow durable run: %w", err)
		}
		if run.RuntimeStatus.Finished() || f.applied && engine.RunSettled(run) {
			settling = true
		}
	}
}

// read reads the next feed answer, waiting up to wait for news, and moves the position past
// it. An answer that holds a step's first records is completed with the rows committed since
// its head read (the step before committed before they were appended, and its rows come
// first) and with the records appended since its live read: those rows may hold a step's
// commit whose last chunks came after that read. Records of yet another step call for one more
// read, up to maxCatchUp.
func (f *follower) read(ctx context.Context, wait time.Duration) (engine.FeedPage, error) {
	page, err := f.feeder.Feed(ctx, f.id, engine.FeedQuery{After: f.after, Run: f.run, Wait: wait, Live: true, LiveAfter: f.liveAfter})
	if err != nil {
		return engine.FeedPage{}, fmt.Errorf("follow durable run: %w", err)
	}
	for fresh, n := page.Live, 0; f.newStep(fresh) && !page.End && n < maxCatchUp; n++ {
		rest, err := f.feeder.Feed(ctx, f.id, engine.FeedQuery{After: page.NextAfter, Run: page.Run, Live: true, LiveAfter: page.LiveNext})
		if err != nil {
			return engine.FeedPage{}, fmt.Errorf("follow durable run: %w", err)
		}
		fresh = rest.Live
		page.Items, page.NextAfter = append(page.Items, rest.Items...), rest.NextAfter
		page.Live, page.LiveNext = append(page.Live, rest.Live...), rest.LiveNext
		page.Status, page.End = rest.Status, rest.End
	}
	f.run, f.after, f.liveAfter = page.Run, page.NextAfter, page.LiveNext
	return page, nil
}

// maxCatchUp bounds the reads that complete one answer (follower.read): a run that starts a
// step between each may have a step's rows sent before its last chunks.
const maxCatchUp = 4

// newStep reports whether recs hold a chunk or a preview of a step later than those seen.
func (f *follower) newStep(recs []engine.LiveRecord) bool {
	seen := f.liveStep
	for _, r := range recs {
		if r.Kind == engine.LiveChunk || r.Kind == engine.LiveCustom {
			f.liveStep = max(f.liveStep, r.Step)
		}
	}
	return f.liveStep > seen
}

// skipLive moves the follower's live position to the end of the run's live channel: one
// read of what the channel holds (engine.FeedPageBytes at a time).
func (f *follower) skipLive(ctx context.Context) error {
	for {
		page, err := f.feeder.Feed(ctx, f.id, engine.FeedQuery{After: f.after, Run: f.run, Live: true, LiveAfter: f.liveAfter})
		if err != nil {
			return fmt.Errorf("follow durable run: %w", err)
		}
		f.run = page.Run
		if len(page.Live) == 0 {
			return nil
		}
		f.liveAfter = page.LiveNext
		f.newStep(page.Live)
	}
}

// page reports one feed answer's records and rows, and whether one of them may have settled
// the run (a wait, the run's end). Records and rows are interleaved as they happened, as far
// as an answer tells: the records of a node come before the node's rows when the answer holds
// both (a step's last chunks are appended just before its commit), the records of a node
// whose rows are not in the answer after them (the next step's).
func (f *follower) page(ctx context.Context, page engine.FeedPage) (hint bool, err error) {
	live := page.Live
	flush := func(n int) error {
		for _, r := range live[:n] {
			if err := f.record(r); err != nil {
				return err
			}
		}
		live = live[n:]
		return nil
	}
	for _, h := range page.Items {
		switch h.Type {
		case engine.HistoryWaitStarted, engine.HistoryRunCompleted, engine.HistoryRunFailed, engine.HistoryRunTerminated:
			hint = true
		case engine.HistoryEventApplied:
			if h.Sequence > f.resumedAt {
				f.applied = true
			}
		}
		if h.Node != "" {
			if err := flush(lastOfNode(live, h.Node) + 1); err != nil {
				return hint, err
			}
		}
		if err := f.row(ctx, h); err != nil {
			return hint, err
		}
	}
	return hint, flush(len(live))
}

// lastOfNode is the index of the last chunk or preview of node in recs, or -1.
func lastOfNode(recs []engine.LiveRecord, node string) int {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Node == node && (recs[i].Kind == engine.LiveChunk || recs[i].Kind == engine.LiveCustom) {
			return i
		}
	}
	return -1
}

// row reports one history row: a step's state, a branch's result, the join's state, or an
// emitted event not sent yet.
func (f *follower) row(ctx context.Context, h engine.HistoryEvent) error {
	var d struct {
		Result json.RawMessage `json:"result"`
		Node   string          `json:"node"`
		Name   string          `json:"name"`
		Data   json.RawMessage `json:"data"`
	}
	if len(h.Data) == 0 || json.Unmarshal(h.Data, &d) != nil {
		return nil
	}
	state, err := f.stateAfter(ctx, h)
	if err != nil {
		return err
	}
	ev := platform.DurableEvent{Kind: platform.DurableStep, Node: h.Node, Branch: -1}
	switch h.Type {
	case engine.HistoryNodeCompleted, engine.HistoryEventApplied:
		ev.Values, ev.Update = state, state
	case engine.HistoryBranchCompleted:
		ev.Update = d.Result
		if d.Node != "" {
			ev.Node = d.Node
		}
	case engine.HistoryBranchesJoined:
		ev.Values = state
	case engine.HistoryCustom:
		k := eventKey(d.Name, d.Data)
		if f.sentPreviews[k] > 0 {
			f.sentPreviews[k]--
			return nil
		}
		f.sentRows[k]++
		return f.emit(platform.DurableEvent{Kind: platform.DurableEmitted, Node: h.Node, Name: d.Name, Data: d.Data, Branch: -1})
	default:
		return nil
	}
	if len(ev.Values) == 0 && len(ev.Update) == 0 {
		return nil
	}
	return f.emit(ev)
}

// stateAfter returns the run's state after row h, the row after those sent, or nil when h
// records none. A resume's follower starts after the event's wait: before its first row that
// records a state, it folds the rows before from the run's history, one read of that run's
// history, oldest first (a row that records the whole state needs none).
func (f *follower) stateAfter(ctx context.Context, h engine.HistoryEvent) (json.RawMessage, error) {
	s, recorded, err := engine.FoldState(f.state, h)
	if err != nil && !f.known {
		rows, herr := f.a.history(ctx, f.id)
		if herr != nil {
			return nil, herr
		}
		f.state, f.known = nil, true
		for _, r := range rows {
			if r.Sequence >= h.Sequence {
				break
			}
			if f.state, _, err = engine.FoldState(f.state, r); err != nil {
				return nil, fmt.Errorf("follow durable run: %w", err)
			}
		}
		s, recorded, err = engine.FoldState(f.state, h)
	}
	if err != nil {
		return nil, fmt.Errorf("follow durable run: %w", err)
	}
	if !recorded {
		return nil, nil
	}
	f.state = s
	return s, nil
}

// record reports one live record: a chunk at once, an emitted event's preview once its
// writer's commit says it is final.
func (f *follower) record(r engine.LiveRecord) error {
	switch r.Kind {
	case engine.LiveChunk:
		return f.emit(platform.DurableEvent{Kind: platform.DurableChunk, Node: r.Node, Name: r.Name, Data: r.Data,
			Writer: r.Writer, Step: r.Step, Attempt: r.Attempt, Branch: r.Branch})
	case engine.LiveCustom:
		f.previews[r.Writer] = append(f.previews[r.Writer], r)
	case engine.LiveRetract:
		delete(f.previews, r.Writer)
	case engine.LiveCommit:
		held := f.previews[r.Writer]
		delete(f.previews, r.Writer)
		// The step's (or branch's) other writers died before their end: retracted.
		for w, recs := range f.previews {
			if len(recs) > 0 && recs[0].Step == r.Step && recs[0].Branch == r.Branch {
				delete(f.previews, w)
			}
		}
		for _, p := range held {
			k := eventKey(p.Name, p.Data)
			if f.sentRows[k] > 0 {
				f.sentRows[k]--
				continue
			}
			f.sentPreviews[k]++
			if err := f.emit(platform.DurableEvent{Kind: platform.DurableEmitted, Node: p.Node, Name: p.Name, Data: p.Data,
				Writer: p.Writer, Step: p.Step, Attempt: p.Attempt, Branch: p.Branch}); err != nil {
				return err
			}
		}
	}
	return nil
}

// eventKey identifies an emitted event by its name and its data, compacted.
func eventKey(name string, data json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		b.Reset()
		b.Write(data)
	}
	return name + "\x00" + b.String()
}
