package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The live channel of a run: what a step writes while it runs (durable.Write, and a preview of
// each durable.Emit), readable at once from any instance, before the step commits.
//
// A run's channel is one LiveStore log, "<run id>/<run nonce>/live", under the run's payload
// prefix: a new start of the id writes a new log, and purging the run deletes it. It holds
// records, one JSON object per line:
//
//	{"k":"chunk","w":<writer>,"q":<seq>,"s":<step>,"a":<attempt>,"n":<node>,"b":<branch>,"name":…,"data":…}
//	{"k":"custom",…}                        a preview of an emitted event (same members)
//	{"k":"commit","w":<writer>,"s":<step>,"b":<branch>}
//	{"k":"retract","w":<writer>,"s":<step>,"b":<branch>}
//
// A writer is one attempt of one step (or of one branch: "b" is its index in the fan-out,
// absent outside one). Its chunks are provisional until a commit or retract record names it:
// "commit" says that the step (or branch) committed, that the writer's chunks are final and
// that the chunks of every other writer of the same step and branch are retracted (attempts
// that died before writing their end); "retract" says that the attempt failed and its chunks
// are to be dropped. A finished run's provisional chunks are retracted. The commit of a step
// writes its record after its batch landed, and only for a step that wrote chunks or that is
// not its step's first attempt, so a step that writes nothing costs nothing.
//
// Writes are coalesced: the first chunk of a quiet writer is appended at once, then at most
// one append each Options.LiveFlushInterval (default 100 ms: at most 10 appends a second per
// step, whatever the rate of its chunks), and a step's last chunks before its commit. Each
// append is conditional on the log's length (LiveStore.Append), so writers of parallel
// branches take turns; an append whose answer was lost is resolved by reading the log for the
// writer's record, never by trying again blindly. A storage failure drops the writer's
// chunks that follow (the step goes on: the channel is not its truth) and is logged.
//
// Bounds: durable.MaxWriteBytesPerStep per attempt, MaxLiveBytes per run (the log's).

// Kinds of live records.
const (
	// LiveChunk is a chunk a handler wrote with durable.Write.
	LiveChunk = "chunk"
	// LiveCustom is the preview of an event a handler emitted with durable.Emit; the step's
	// commit writes the event to history.
	LiveCustom = "custom"
	// LiveCommit marks the chunks of its writer final, and those of the step's (or branch's)
	// other writers retracted.
	LiveCommit = "commit"
	// LiveRetract marks the chunks of its writer retracted: the attempt failed.
	LiveRetract = "retract"
)

// DefaultLiveFlushInterval is the default Options.LiveFlushInterval.
const DefaultLiveFlushInterval = 100 * time.Millisecond

// maxLiveStepBytes mirrors durable.MaxWriteBytesPerStep (the engine's check of it).
const maxLiveStepBytes = 1 << 20

// errLiveFull is a chunk refused for the step's bound or a failed channel.
var errLiveFull = errors.New("engine: the step's live channel is full or failed")

// liveKey is the log of the run of nonce.
func liveKey(runID, nonce string) string { return payloadPrefix(runID, nonce) + "live" }

// liveRecord is the JSON form of one record.
type liveRecord struct {
	Kind    string          `json:"k"`
	Writer  string          `json:"w"`
	Seq     int             `json:"q,omitempty"`
	Step    int64           `json:"s"`
	Attempt int             `json:"a,omitempty"`
	Node    string          `json:"n,omitempty"`
	Branch  *int            `json:"b,omitempty"`
	Name    string          `json:"name,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// liveWriter is the live sink of one step attempt (graphrun.LiveSink).
type liveWriter struct {
	e     *Engine
	runID string
	key   string
	base  liveRecord // writer, step, attempt, node, branch
	mark  bool       // not the step's first attempt: its end is written even with no chunk
	// attemptFailed: a handler returned an error; the end retracts the chunks. Set once the
	// handlers are done, read by the step's end (one goroutine).
	attemptFailed bool

	mu       sync.Mutex
	pend     []byte        // guarded by mu: records not yet appended
	pendSeq  int           // guarded by mu: seq of pend's first record
	seq      int           // guarded by mu: the next record's seq
	size     int           // guarded by mu: bytes taken, for the step's bound
	wrote    bool          // guarded by mu: a chunk was taken
	failed   bool          // guarded by mu: an append failed; later chunks are dropped
	closed   bool          // guarded by mu
	flushing chan struct{} // guarded by mu: closed when the running flush ends; nil: none
	timer    *time.Timer   // guarded by mu
	last     time.Time     // guarded by mu: when the last append began
}

// newLiveWriter returns the live sink of one attempt of step (branch: its index, or -1) of h,
// or nil on an engine without a live channel.
func (e *Engine) newLiveWriter(h *head, step int64, attempt int, node string, branch int, mark bool) *liveWriter {
	if e.live == nil {
		return nil
	}
	w := &liveWriter{e: e, runID: h.runID, key: liveKey(h.runID, h.nonce), mark: mark, seq: 1, pendSeq: 1,
		base: liveRecord{Writer: newNonce(), Step: step, Attempt: attempt, Node: node}}
	if branch >= 0 {
		w.base.Branch = &branch
	}
	return w
}

// Chunk implements graphrun.LiveSink.
func (w *liveWriter) Chunk(kind, name string, data json.RawMessage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.failed {
		return errLiveFull
	}
	r := w.base
	r.Kind, r.Seq, r.Name, r.Data = kind, w.seq, name, data
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if w.size+len(line) > maxLiveStepBytes {
		return errLiveFull
	}
	w.size += len(line)
	w.seq++
	w.wrote = true
	w.pend = append(w.pend, line...)
	w.schedule()
	return nil
}

// schedule starts a flush now, or arms the timer for when the interval since the last append
// has passed. Callers hold mu.
func (w *liveWriter) schedule() {
	if w.flushing != nil || w.timer != nil || len(w.pend) == 0 {
		return
	}
	if wait := w.e.opts.LiveFlushInterval - time.Since(w.last); wait > 0 {
		w.timer = time.AfterFunc(wait, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.timer = nil
			if !w.closed {
				w.startFlush()
			}
		})
		return
	}
	w.startFlush()
}

// startFlush appends what is pending in a goroutine. Callers hold mu.
func (w *liveWriter) startFlush() {
	if w.flushing != nil || len(w.pend) == 0 || w.failed {
		return
	}
	done := make(chan struct{})
	w.flushing = done
	data, seq := w.take()
	go func() {
		err := w.e.liveAppend(context.Background(), w.runID, w.key, data, w.base.Writer, seq)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.flushing = nil
		close(done)
		if err != nil {
			w.fail(err)
			return
		}
		if !w.closed {
			w.schedule()
		}
	}()
}

// take returns the pending records and their first seq, and empties pend. Callers hold mu.
func (w *liveWriter) take() ([]byte, int) {
	data, seq := w.pend, w.pendSeq
	w.pend, w.pendSeq, w.last = nil, w.seq, time.Now()
	return data, seq
}

// fail drops what follows an append that failed. Callers hold mu.
func (w *liveWriter) fail(err error) {
	if !w.failed {
		w.e.log.Warn("live channel: append failed; the step's later chunks are dropped", "run_id", w.runID,
			"step", w.base.Step, "error", err.Error())
	}
	w.failed, w.pend = true, nil
}

// close ends the attempt's writes: it appends what is pending, waiting for a flush under way,
// before the step commits, so that the step's chunks precede its end in the log.
func (w *liveWriter) close(ctx context.Context) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	running := w.flushing
	w.mu.Unlock()
	if running != nil {
		<-running
	}
	w.mu.Lock()
	if w.failed || len(w.pend) == 0 {
		w.mu.Unlock()
		return
	}
	data, seq := w.take()
	w.mu.Unlock()
	if err := w.e.liveAppend(ctx, w.runID, w.key, data, w.base.Writer, seq); err != nil {
		w.mu.Lock()
		w.fail(err)
		w.mu.Unlock()
	}
}

// end writes the attempt's end record, LiveCommit or LiveRetract, after close: only for an
// attempt that wrote a chunk or is not its step's first (whose earlier attempts may have).
// Best effort: a reader also takes a finished run's provisional chunks as retracted.
func (w *liveWriter) end(ctx context.Context, kind string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	write := w.wrote || w.mark
	w.mu.Unlock()
	if !write {
		return
	}
	r := liveRecord{Kind: kind, Writer: w.base.Writer, Step: w.base.Step, Branch: w.base.Branch}
	line, _ := json.Marshal(r)
	line = append(line, '\n')
	// An end record carries no seq: one whose answer was lost is found by its kind and writer.
	if err := w.e.liveAppend(context.WithoutCancel(ctx), w.runID, w.key, line, w.base.Writer, 0); err != nil {
		w.e.log.Warn("live channel: end record not written", "run_id", w.runID, "step", w.base.Step, "kind", kind, "error", err.Error())
	}
}

// maxLiveTries bounds the appends of one record batch that meet other writers' appends.
const maxLiveTries = 16

// liveAppendTimeout bounds one batch's appends, their reads included: past it the batch fails
// (its writer's later chunks are dropped) and the step goes on.
const liveAppendTimeout = 30 * time.Second

// liveAppend appends data, records of writer whose first has seq (0: an end record), at the
// end of log key. The length it appends at is the one this engine last saw, else read; a
// conflict or an unknown outcome reads the log from there for the writer's record: present,
// the append landed; absent, it goes again at the new end.
func (e *Engine) liveAppend(ctx context.Context, runID, key string, data []byte, writer string, seq int) error {
	// Bounded: a step's end waits for its appends, and a channel is not worth a stuck step.
	ctx, cancel := context.WithTimeout(ctx, liveAppendTimeout)
	defer cancel()
	at, known := e.liveLens.get(key)
	for range maxLiveTries {
		if !known {
			n, err := e.live.Length(ctx, key)
			switch {
			case errors.Is(err, ErrNotFound):
				n = 0
			case err != nil:
				return err
			}
			at, known = n, true
		}
		n, err := e.live.Append(ctx, key, at, data)
		if err == nil {
			e.liveLens.put(key, n)
			e.liveSignals.notify(runID)
			return nil
		}
		if refused(err) {
			return err
		}
		// Another writer's append came first, or this one landed although its answer was
		// lost (a conflict included: the SDK's retry meets its own append): the log says.
		found, end, rerr := e.liveFind(ctx, key, at, writer, seq)
		if rerr != nil {
			return fmt.Errorf("%w (outcome unknown: %v)", err, rerr)
		}
		if found {
			e.liveLens.put(key, end)
			e.liveSignals.notify(runID)
			return nil
		}
		at = end
	}
	return fmt.Errorf("append live %s: the log keeps growing under other writers: %w", key, ErrConflict)
}

// liveFind reads log key from offset from to its end and reports whether it holds a record
// of writer with seq (0: an end record of writer), and the log's length.
func (e *Engine) liveFind(ctx context.Context, key string, from int64, writer string, seq int) (bool, int64, error) {
	found := false
	for {
		data, length, err := e.live.Read(ctx, key, from, MaxLiveAppendBytes)
		if errors.Is(err, ErrNotFound) {
			return false, 0, nil
		}
		if err != nil {
			return false, 0, err
		}
		recs, used := parseLive(data, from)
		for _, r := range recs {
			if r.Writer == writer && (r.Seq == seq && seq > 0 || seq == 0 && (r.Kind == LiveCommit || r.Kind == LiveRetract)) {
				found = true
			}
		}
		from += int64(used)
		if from >= length || used == 0 {
			return found, length, nil
		}
	}
}

// liveLens remembers the length this engine last saw of recent logs, so that a step's
// appends need not read it first. Bounded: it forgets everything past liveLensMax logs.
type liveLens struct {
	mu sync.Mutex
	m  map[string]int64
}

const liveLensMax = 4096

func (l *liveLens) get(key string) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.m[key]
	return n, ok
}

func (l *liveLens) put(key string, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= liveLensMax {
		l.m = map[string]int64{}
	}
	if n > l.m[key] {
		l.m[key] = n
	}
}
