package runsclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// defaultFeedRetry is the reconnection delay of a feed whose answers named none (the app's
// event streams ask for 500 ms).
const defaultFeedRetry = 500 * time.Millisecond

// FeedOptions tune Feed.
type FeedOptions struct {
	// Cursor resumes after the item whose FeedEvent.Cursor it is ("" from the start). It is
	// the event stream's Last-Event-ID: an integer, a seq of the run the id holds now, also
	// works.
	Cursor string
	// Live asks for the run's live channel too (what a step writes while it runs:
	// durable.Write, previews of durable.Emit), as events of Type "live" with Live set.
	Live bool
}

// FeedEvent is one item of a run's feed: a history row (Event), a live record (Type "live",
// Live set), or the end (End set, the last event of the feed).
type FeedEvent struct {
	Event
	// Cursor resumes the feed after this event (FeedOptions.Cursor).
	Cursor string
	// Live is the live record of an event of Type "live".
	Live *LiveRecord
	// State is the run's state after this row when the follower knows it: always when the
	// feed is followed from its start; when resumed from a cursor, from the first row that
	// carries the whole state (a graph with reducers records updates: docs/durable-graphs.md).
	// nil when unknown.
	State json.RawMessage
	// End marks the feed's last event: the run finished and every item was sent; Status is
	// the run's final status.
	End    bool
	Status Status
}

// LiveRecord is one record of a run's live channel.
type LiveRecord struct {
	Offset int64 `json:"offset"`
	Next   int64 `json:"next"`
	// Kind is chunk (durable.Write), custom (an emitted event's preview), commit (the
	// writer's chunks are final) or retract (drop the writer's chunks: its attempt failed).
	Kind    string          `json:"kind"`
	Writer  string          `json:"writer"`
	Step    int64           `json:"step"`
	Attempt *int            `json:"attempt"`
	Node    *string         `json:"node"`
	Branch  *int            `json:"branch"`
	Name    *string         `json:"name"`
	Data    json.RawMessage `json:"data"`
}

// Feed follows run instanceID from opts.Cursor on, yielding its items in order, each once,
// and a last event with End set when the run has finished. It reads the feed's event stream
// and reconnects with the last cursor whenever an answer ends without the end (a long poll
// under the Functions host, a stream cut before functionTimeout or by a proxy) or the
// connection drops; it gives up, yielding the error, after Retry.MaxAttempts failed
// connections in a row. Errors: ErrNotFound for an unknown run, ErrConflict when the cursor is
// in a run the id no longer holds (replaced or purged: follow again without a cursor),
// ErrBadRequest for a cursor that is no frame id. Stop early by breaking out of the loop or
// cancelling ctx.
func (c *Client) Feed(ctx context.Context, instanceID string, opts FeedOptions) iter.Seq2[FeedEvent, error] {
	return func(yield func(FeedEvent, error) bool) {
		f := &follower{c: c, id: instanceID, cursor: opts.Cursor, live: opts.Live, known: opts.Cursor == ""}
		f.run(ctx, yield)
	}
}

// follower is one Feed's position and state.
type follower struct {
	c      *Client
	id     string
	cursor string
	live   bool
	// seq and run are the position of the last item yielded (from its frame id), so an item
	// sent again is not yielded twice.
	seq     int64
	lastRun string
	// state is the run's state after the last row; known says whether it is.
	state json.RawMessage
	known bool
}

// run follows the feed until its end, an error or the caller stops.
func (f *follower) run(ctx context.Context, yield func(FeedEvent, error) bool) {
	failures := 0
	for {
		delay, progressed, err := f.connect(ctx, yield)
		switch {
		case errors.Is(err, errStopped):
			return
		case err != nil && ctx.Err() != nil:
			yield(FeedEvent{}, fmt.Errorf("runsclient: feed of %s: %w", f.id, ctx.Err()))
			return
		case err != nil && terminal(err):
			yield(FeedEvent{}, err)
			return
		case err != nil:
			if progressed {
				failures = 0
			}
			failures++
			if failures >= f.c.retry.MaxAttempts {
				yield(FeedEvent{}, err)
				return
			}
			delay = max(delay, f.c.retry.backoff(failures))
		default:
			failures = 0
		}
		if err := f.c.sleep(ctx, delay); err != nil {
			yield(FeedEvent{}, fmt.Errorf("runsclient: feed of %s: %w", f.id, err))
			return
		}
	}
}

// errStopped: the caller stopped the iteration, or the feed ended.
var errStopped = errors.New("runsclient: feed stopped")

// terminal reports an error no reconnection mends: an answer other than busy.
func terminal(err error) bool {
	var e *Error
	return errors.As(err, &e) && !errors.Is(e, ErrBusy)
}

// connect reads one answer of the event stream, yielding its items. It returns the delay the
// answer asked for before the next, whether it yielded anything, and errStopped when the feed
// ended or the caller stopped; nil when the answer ended cleanly without the end, an error
// when it failed.
func (f *follower) connect(ctx context.Context, yield func(FeedEvent, error) bool) (time.Duration, bool, error) {
	q := url.Values{}
	if !f.live {
		q.Set("live", "false")
	}
	h := http.Header{"Accept": {"text/event-stream"}}
	if f.cursor != "" {
		h.Set("Last-Event-ID", f.cursor)
	}
	r := &request{method: http.MethodGet, path: "/runs/" + seg(f.id) + "/feed", query: q, header: h, resend: true}
	res, err := f.c.send(ctx, r)
	if err != nil {
		return 0, false, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, false, readError(res, r.method, r.logPath(f.c))
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return 0, false, fmt.Errorf("runsclient: feed of %s: answered %q, not an event stream", f.id, ct)
	}
	delay, progressed := defaultFeedRetry, false
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), maxAnswerBody)
	var fr frame
	for sc.Scan() {
		line := sc.Text()
		if line != "" {
			fr.add(line, &delay)
			continue
		}
		if fr.event == "" && fr.data == nil {
			fr = frame{}
			continue // a comment (keep-alive) or a retry field alone
		}
		ev, err := f.event(fr)
		fr = frame{}
		if errors.Is(err, errSeen) {
			continue
		}
		if err != nil {
			if errors.Is(err, errFrameError) {
				return delay, progressed, err // the app could not go on: resume from the cursor
			}
			return delay, progressed, fmt.Errorf("runsclient: feed of %s: %w", f.id, err)
		}
		progressed = true
		if !yield(ev, nil) || ev.End {
			return 0, true, errStopped
		}
	}
	if err := sc.Err(); err != nil {
		return delay, progressed, fmt.Errorf("runsclient: feed of %s: connection dropped: %w", f.id, transportError(err))
	}
	return delay, progressed, nil // a clean end without the end: reconnect
}

// frame is one Server-Sent Event being read.
type frame struct {
	id, event string
	hasID     bool
	data      []string
}

// add reads one field line into fr (a retry field sets *delay).
func (fr *frame) add(line string, delay *time.Duration) {
	if strings.HasPrefix(line, ":") {
		return
	}
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch name {
	case "id":
		fr.id, fr.hasID = value, true
	case "event":
		fr.event = value
	case "data":
		fr.data = append(fr.data, value)
	case "retry":
		if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
			*delay = time.Duration(ms) * time.Millisecond
		}
	}
}

// errSeen is an item the follower yielded already.
var errSeen = errors.New("runsclient: feed item seen already")

// frameSeq reads the seq and run of a frame id "<seq>.<run>[.<live>]" (0, "" when it has
// none).
func frameSeq(id string) (int64, string) {
	seq, rest, _ := strings.Cut(id, ".")
	run, _, _ := strings.Cut(rest, ".")
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil {
		return 0, ""
	}
	return n, run
}

// errFrameError is an error frame: the app's stream ended on a failure (no room for the next
// frames, a storage error); the follower resumes from its cursor.
var errFrameError = errors.New("runsclient: the feed's stream ended with an error frame")

// event decodes one frame, moving the cursor and the state.
func (f *follower) event(fr frame) (FeedEvent, error) {
	data := strings.Join(fr.data, "\n")
	switch fr.event {
	case "end":
		var end struct {
			RuntimeStatus Status `json:"runtime_status"`
		}
		if err := json.Unmarshal([]byte(data), &end); err != nil {
			return FeedEvent{}, fmt.Errorf("decode end frame: %w", err)
		}
		return FeedEvent{Event: Event{Type: "end"}, Cursor: f.cursor, State: f.current(), End: true, Status: end.RuntimeStatus}, nil
	case "error":
		var body struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal([]byte(data), &body)
		return FeedEvent{}, fmt.Errorf("%w: %s", errFrameError, body.Error)
	case "live":
		var rec LiveRecord
		if err := json.Unmarshal([]byte(data), &rec); err != nil {
			return FeedEvent{}, fmt.Errorf("decode live frame: %w", err)
		}
		if fr.hasID && fr.id != "" {
			f.cursor = fr.id
		}
		return FeedEvent{Event: Event{Type: "live", Node: deref(rec.Node), Name: deref(rec.Name), Data: rec.Data}, Cursor: f.cursor, Live: &rec, State: f.current()}, nil
	}
	var ev Event
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return FeedEvent{}, fmt.Errorf("decode %s frame: %w", fr.event, err)
	}
	if fr.hasID && fr.id != "" {
		seq, run := frameSeq(fr.id)
		if run != "" && run == f.lastRun && seq <= f.seq {
			return FeedEvent{}, errSeen // sent again (a proxy's replay): yielded once already
		}
		f.seq, f.lastRun = seq, run
		f.cursor = fr.id
	}
	if err := f.fold(ev); err != nil {
		return FeedEvent{}, err
	}
	return FeedEvent{Event: ev, Cursor: f.cursor, State: f.current()}, nil
}

// fold moves the state past ev (engine.FoldState, the one place histories are folded). An
// update on an unknown state leaves it unknown.
func (f *follower) fold(ev Event) error {
	var prev json.RawMessage
	if f.known {
		prev = f.state
	}
	s, recorded, err := engine.FoldState(prev, engine.HistoryEvent{Sequence: ev.Seq, Type: ev.Type, Data: ev.Data})
	switch {
	case err != nil && f.known:
		return fmt.Errorf("fold the state: %w", err)
	case err != nil:
		return nil
	case !recorded:
		return nil
	}
	if !f.known && ev.Type != engine.HistoryRunStarted && !hasWholeState(ev.Data) {
		return nil // an update against a state this follower never saw
	}
	f.state, f.known = s, true
	return nil
}

// hasWholeState reports whether a row's data carries "state" rather than an "update".
func hasWholeState(data json.RawMessage) bool {
	var d struct {
		State json.RawMessage `json:"state"`
	}
	return json.Unmarshal(data, &d) == nil && d.State != nil
}

// current is the state when known, else nil.
func (f *follower) current() json.RawMessage {
	if !f.known {
		return nil
	}
	return f.state
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// StateEvent is a FeedEvent with the state decoded (Follow).
type StateEvent[S any] struct {
	FeedEvent
	// State is the run's state after this event, nil when unknown (FeedEvent.State).
	State *S
}

// Follow is Feed with the run's state decoded into S at each event.
func Follow[S any](ctx context.Context, c *Client, instanceID string, opts FeedOptions) iter.Seq2[StateEvent[S], error] {
	return func(yield func(StateEvent[S], error) bool) {
		for ev, err := range c.Feed(ctx, instanceID, opts) {
			if err != nil {
				yield(StateEvent[S]{}, err)
				return
			}
			out := StateEvent[S]{FeedEvent: ev}
			if ev.State != nil {
				var s S
				if err := json.Unmarshal(ev.State, &s); err != nil {
					yield(StateEvent[S]{}, fmt.Errorf("runsclient: feed of %s: decode state at seq %d: %w", instanceID, ev.Seq, err))
					return
				}
				out.State = &s
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// WaitForCompletion follows the run's feed until the run has finished and returns its final
// status (Completed, Failed or Terminated: a Failed run is no error; Result tells). It reads
// the run's history once, from its start, then waits for what comes; the feed's reconnections
// are Feed's. Errors: Feed's, and ctx's when it ends first.
func (c *Client) WaitForCompletion(ctx context.Context, instanceID string) (*RunStatus, error) {
	for ev, err := range c.Feed(ctx, instanceID, FeedOptions{}) {
		if err != nil {
			return nil, err
		}
		if ev.End {
			return c.Status(ctx, instanceID)
		}
	}
	return nil, fmt.Errorf("runsclient: feed of %s ended without its end", instanceID)
}
