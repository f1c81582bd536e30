package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Reading a run's live channel (live.go), as part of its feed (FeedQuery.Live).
//
// A feed that asks for the live channel reads it from FeedQuery.LiveAfter with each answer:
// one LiveStore.Read (at most FeedPageBytes). While it waits, an append this process makes to
// the run's log wakes it at once; another instance's append is seen by a LiveStore.Length
// every Options.LivePollInterval (default 100 ms: ten calls a second per waiting feed, only
// while it waits), and read when the length moved.

// DefaultLivePollInterval is the default Options.LivePollInterval.
const DefaultLivePollInterval = 100 * time.Millisecond

// liveEndWait is how long a feed whose run finished waits for the end record of the run's
// last writer, appended just after the step's commit, before it answers End.
const liveEndWait = time.Second

// LiveRecord is one record of a run's live channel.
type LiveRecord struct {
	// Offset is where the record starts in the channel; Next where the next starts: a reader
	// that has this record resumes from Next (FeedQuery.LiveAfter).
	Offset, Next int64
	// Kind is LiveChunk, LiveCustom, LiveCommit or LiveRetract.
	Kind string
	// Writer names the step attempt that wrote it: a commit or retract record names the
	// writer whose chunks it makes final or drops.
	Writer string
	// Seq numbers a writer's chunks from 1 (0 in an end record).
	Seq int
	// Step is the step (the fan-out's step, for a branch) the attempt belongs to, and
	// Attempt its attempt (from 1; 0 in an end record).
	Step    int64
	Attempt int
	// Node is the node of the attempt ("" in an end record, and for an event handler's).
	Node string
	// Branch is the branch's index in its fan-out, -1 outside one.
	Branch int
	// Name and Data are a chunk's (or an emitted event's) name and JSON data.
	Name string
	Data json.RawMessage
}

// parseLive decodes the whole records of data, read from offset from, and returns them with
// the bytes they take (a trailing partial line, cut by a read's bound, is left for the next
// read). A line that is not a record is skipped.
func parseLive(data []byte, from int64) ([]LiveRecord, int) {
	var out []LiveRecord
	used := 0
	for {
		i := bytes.IndexByte(data[used:], '\n')
		if i < 0 {
			return out, used
		}
		line := data[used : used+i]
		start := from + int64(used)
		used += i + 1
		var r liveRecord
		if err := json.Unmarshal(line, &r); err != nil || r.Kind == "" {
			continue
		}
		rec := LiveRecord{Offset: start, Next: from + int64(used), Kind: r.Kind, Writer: r.Writer, Seq: r.Seq, Step: r.Step,
			Attempt: r.Attempt, Node: r.Node, Branch: -1, Name: r.Name, Data: r.Data}
		if r.Branch != nil {
			rec.Branch = *r.Branch
		}
		out = append(out, rec)
	}
}

// liveRead reads h's live channel from after: its records and the offset after them. A run
// with no log yet has none.
func (e *Engine) liveRead(ctx context.Context, h *head, after int64) ([]LiveRecord, int64, error) {
	data, _, err := e.live.Read(ctx, liveKey(h.runID, h.nonce), after, FeedPageBytes)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, after, nil
	case errors.Is(err, ErrInvalidQuery) && after > 0:
		return nil, after, fmt.Errorf("%w: live position %d is past the run's live channel", ErrInvalidQuery, after)
	case err != nil:
		return nil, after, fmt.Errorf("read live run=%s after=%d: %w", h.runID, after, err)
	}
	recs, used := parseLive(data, after)
	return recs, after + int64(used), nil
}

// liveLength returns the length of h's live channel (0 with none).
func (e *Engine) liveLength(ctx context.Context, h *head) (int64, error) {
	n, err := e.live.Length(ctx, liveKey(h.runID, h.nonce))
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return n, err
}

// liveTailWindow is how much of the end of a log liveTailOpen reads: more than a chunk's
// record (durable.MaxWriteDataBytes and its framing).
const liveTailWindow = 80 << 10

// liveTailOpen reports whether h's live channel goes on past seen, the position a feed's
// answer reached (an end record appended since it was read), or ends with a chunk, not an end
// record (its last writer has not written its end yet). It reads the log's end (a Length and a
// Read), only when a feed reaches a finished run's end.
func (e *Engine) liveTailOpen(ctx context.Context, h *head, seen int64) (bool, error) {
	n, err := e.liveLength(ctx, h)
	if err != nil || n == 0 {
		return false, err
	}
	if n > seen {
		return true, nil
	}
	from := max(0, n-liveTailWindow)
	data, _, err := e.live.Read(ctx, liveKey(h.runID, h.nonce), from, liveTailWindow)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read live run=%s: %w", h.runID, err)
	}
	if from > 0 { // the window may begin inside a record
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return false, nil
		}
		data, from = data[i+1:], from+int64(i+1)
	}
	recs, _ := parseLive(data, from)
	if len(recs) == 0 {
		return false, nil
	}
	last := recs[len(recs)-1].Kind
	return last != LiveCommit && last != LiveRetract, nil
}
