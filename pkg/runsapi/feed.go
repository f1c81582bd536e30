package runsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/sse"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/openapi"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// The feed: GET /api/runs/{instance_id}/feed?after=<seq>&wait=<seconds> (docs/http-runs.md).
//
// JSON form: one engine.Feed call. It answers the run's history items after `after` (at most
// engine.FeedPageSize), at once when there are some or the run is finished, else once the run
// moves or `wait` seconds have passed (default DefaultFeedWait, at most the service's MaxWait).
//
// A position is one run's (engine.FeedQuery.Run): a JSON answer names its run (`run`), which
// the next request sends back with `after`, and a frame's id is `<seq>.<run>`. A position in a
// run the id no longer holds (replaced by a new start, or purged and started again) is
// answered 409; `after` without `run` is a position in the run the id holds now.
//
// Event-stream form (Accept: text/event-stream): the same items as frames `id: <seq>.<run>`,
// `event: <type>`, `data: <item>`, resuming after Last-Event-ID (or `after`), and an `end`
// frame once the run is finished and every item is sent. Served by funcgraph's own server
// (`serve`), each frame is flushed as the run writes it, until the run finishes or the client
// leaves, with a keep-alive comment every feedKeepAlive of silence. Under the Functions host
// with proxying (enableProxyingHttpRequest, funchost.Proxied) the stream is the same, but it
// ends cleanly after proxiedStreamSpan of the time functionTimeout leaves it, with a retry
// frame and no end event, and the client reconnects with Last-Event-ID. Without proxying a
// custom handler's response is delivered whole, so the stream is a long poll: the response
// holds the frames there are (waiting up to `wait` for the first) and ends; the client
// reconnects with Last-Event-ID, as EventSource does by itself (the response's retry frame
// asks it to wait feedRetryMillis).

// DefaultFeedWait is how long a feed request without a wait parameter waits for the run to
// move (or the service's MaxWait, when shorter).
const DefaultFeedWait = 20 * time.Second

const (
	// feedKeepAlive is the longest silence of a streamed feed: a keep-alive comment follows.
	feedKeepAlive = 15 * time.Second
	// feedRetryMillis is the reconnection delay a buffered event stream asks for.
	feedRetryMillis = 500
	// lastEventIDHeader carries the id of the last frame an event-stream client received.
	lastEventIDHeader = "Last-Event-ID"
)

// Response bodies of the feed, fields in wire order.
type (
	feedItemBody struct {
		Seq       int64           `json:"seq"`
		Type      string          `json:"type"`
		Name      *string         `json:"name"`
		Node      *string         `json:"node"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	feedBody struct {
		InstanceID    string           `json:"instance_id"`
		RuntimeStatus engine.RunStatus `json:"runtime_status"`
		Run           string           `json:"run"`
		Items         []feedItemBody   `json:"items"`
		NextAfter     int64            `json:"next_after"`
		// Live and LiveNext are present when asked for (live=true), Live [] with none.
		Live     *[]liveItemBody `json:"live,omitempty"`
		LiveNext *int64          `json:"live_next,omitempty"`
	}
	// liveItemBody is one record of the run's live channel.
	liveItemBody struct {
		Offset  int64           `json:"offset"`
		Next    int64           `json:"next"`
		Kind    string          `json:"kind"`
		Writer  string          `json:"writer"`
		Step    int64           `json:"step"`
		Attempt *int            `json:"attempt"`
		Node    *string         `json:"node"`
		Branch  *int            `json:"branch"`
		Name    *string         `json:"name"`
		Data    json.RawMessage `json:"data"`
	}
	feedEndBody struct {
		RuntimeStatus engine.RunStatus `json:"runtime_status"`
	}
)

// errBadLastEventID answers a Last-Event-ID header that is no frame id of a feed.
var errBadLastEventID = apierror.New(apierror.ErrBadRequest, "invalid header 'Last-Event-ID': want the id of a frame of this feed (<seq>.<run>), or an integer of 0 or more")

// errFeedRunReplaced answers a position in a run the id no longer holds
// (engine.ErrFeedRunReplaced).
var errFeedRunReplaced = apierror.New(apierror.ErrConflict,
	"the feed position is in another run of this instance id, which was replaced or purged: read the feed again from after=0 without run")

// maxFeedRunLen bounds the run parameter: a run's token is 12 characters.
const maxFeedRunLen = 64

// feedFunction is the feed route.
func (s *Service) feedFunction(auth funchost.AuthLevel) funchost.HTTPFunction {
	return funchost.HTTPFunction{Name: FuncGetRunFeed, Methods: []string{http.MethodGet}, Route: "runs/{instance_id}/feed", AuthLevel: auth,
		Handler: s.handle(s.isolate(s.getFeed)), Doc: funchost.RouteDoc{Summary: "Follow a run: its history after a position, waiting for more", Tags: []string{"runs"},
			Description: fmt.Sprintf("Query: after (the last seq the client has, default 0), run (the run of the answer after came from; a run the id no longer holds is a 409), wait (seconds to wait when nothing is newer and the run is unfinished, default %d, at most the app's wait bound). "+
				"At most %d items an answer; follow with after=next_after&run=run. With Accept: text/event-stream the items are Server-Sent Events (id: seq.run, event: type, data: the item, then event: end once the run is finished), "+
				"resuming after Last-Event-ID; under the Functions host the stream ends before functionTimeout with proxying, and each response is one long poll without it; the client reconnects.", int(DefaultFeedWait.Seconds()), engine.FeedPageSize),
			Response: openapi.Ref("RunFeed"), Errors: routeErrors(400, 404, 409)}}
}

// feedQuery is a feed request's position (after, in run; "": the run the id holds) and wait.
type feedQuery struct {
	after int64
	run   string
	wait  time.Duration
	// live asks for the run's live channel (engine.FeedQuery.Live) from liveAfter: the
	// event-stream form's default, the JSON form's with live=true.
	live      bool
	liveAfter int64
}

// parseFeedQuery reads after, run, wait and Last-Event-ID (which, when sent, takes the place
// of after, and of run when it names one). wait is at most the service's MaxWait.
func (s *Service) parseFeedQuery(r *http.Request) (feedQuery, error) {
	q := feedQuery{wait: min(DefaultFeedWait, s.maxWait), live: wantsEventStream(r)}
	values := r.URL.Query()
	if v := strings.TrimSpace(values.Get("live")); v != "" {
		live, err := strconv.ParseBool(v)
		if err != nil {
			return feedQuery{}, &apiQueryError{"live", "want true or false"}
		}
		q.live = live
	}
	if v := strings.TrimSpace(values.Get("live_after")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return feedQuery{}, &apiQueryError{"live_after", "want the live_next of an answer of this feed, an integer of 0 or more"}
		}
		q.liveAfter = n
	}
	if v := strings.TrimSpace(values.Get("after")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return feedQuery{}, &apiQueryError{"after", "want the seq of an item of this feed, an integer of 0 or more"}
		}
		q.after = n
	}
	if v := strings.TrimSpace(values.Get("run")); v != "" {
		if !validFeedRun(v) {
			return feedQuery{}, &apiQueryError{"run", "want the run of an answer of this feed"}
		}
		q.run = v
	}
	if v := strings.TrimSpace(values.Get("wait")); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || !plainNumber(v) || math.IsNaN(secs) || secs < 0 || secs > s.maxWait.Seconds() {
			return feedQuery{}, &apiQueryError{"wait", fmt.Sprintf("want a number of seconds from 0 to %s", strconv.FormatFloat(s.maxWait.Seconds(), 'f', -1, 64))}
		}
		q.wait = time.Duration(secs * float64(time.Second))
	}
	if v := strings.TrimSpace(r.Header.Get(lastEventIDHeader)); v != "" {
		seq, rest, hasRun := strings.Cut(v, ".")
		run, live, hasLive := strings.Cut(rest, ".")
		n, err := strconv.ParseInt(seq, 10, 64)
		if err != nil || n < 0 || hasRun && !validFeedRun(run) {
			return feedQuery{}, errBadLastEventID
		}
		q.after = n
		if hasRun {
			q.run = run
		}
		if hasLive {
			off, err := strconv.ParseInt(live, 10, 64)
			if err != nil || off < 0 {
				return feedQuery{}, errBadLastEventID
			}
			q.liveAfter = off
		}
	}
	return q, nil
}

// engineQuery is the engine's query of q, waiting up to wait.
func (q feedQuery) engineQuery(wait time.Duration) engine.FeedQuery {
	return engine.FeedQuery{After: q.after, Run: q.run, Wait: wait, Live: q.live, LiveAfter: q.liveAfter}
}

// nextQuery is the query that follows page, waiting up to wait.
func nextQuery(page engine.FeedPage, live bool, wait time.Duration) engine.FeedQuery {
	return engine.FeedQuery{After: page.NextAfter, Run: page.Run, Wait: wait, Live: live, LiveAfter: page.LiveNext}
}

// validFeedRun reports whether v can be the run of a feed answer: letters and digits, at most
// maxFeedRunLen.
func validFeedRun(v string) bool {
	if v == "" || len(v) > maxFeedRunLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// feedFrameID is the id of the frame of item seq of run: what the client sends back as
// Last-Event-ID. A stream with the live channel adds the live position (liveFrameID).
func feedFrameID(seq int64, run string) string {
	return strconv.FormatInt(seq, 10) + "." + run
}

// liveFrameID is feedFrameID with the live position, <seq>.<run>.<live>: <seq>.<run> while
// it is 0 (nothing read of the channel, which resumes from its start either way).
func liveFrameID(seq int64, run string, live int64) string {
	if live == 0 {
		return feedFrameID(seq, run)
	}
	return feedFrameID(seq, run) + "." + strconv.FormatInt(live, 10)
}

// plainNumber reports whether v is digits with at most one decimal point: what wait accepts
// (no sign, exponent, hexadecimal or special value).
func plainNumber(v string) bool {
	dot := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '.' && !dot:
			dot = true
		case c < '0' || c > '9':
			return false
		}
	}
	return v != "."
}

// wantsEventStream reports whether the request's Accept names text/event-stream.
func wantsEventStream(r *http.Request) bool {
	for _, accept := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(accept, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

// getFeed serves GET /api/runs/{instance_id}/feed. Checks, in order: the parameters (400),
// then the run (404, as for every run route; another identity's under isolation too).
func (s *Service) getFeed(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	q, err := s.parseFeedQuery(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if err := s.checkPublicRun(ctx, id); err != nil {
		return err
	}
	feeder := s.runs.(engine.RunFeeder) // the route is served only then
	if wantsEventStream(r) {
		return s.streamFeed(w, r, feeder, id, q)
	}
	page, _, err := feedUntilDrain(ctx, feeder, id, q.engineQuery(q.wait))
	if err != nil {
		return clientGone(ctx, err)
	}
	out := feedBody{InstanceID: id, RuntimeStatus: page.Status, Run: page.Run, Items: make([]feedItemBody, len(page.Items)), NextAfter: page.NextAfter}
	for i, e := range page.Items {
		out.Items[i] = feedItem(e)
	}
	if q.live {
		live := make([]liveItemBody, len(page.Live))
		for i, rec := range page.Live {
			live[i] = liveItem(rec)
		}
		out.Live, out.LiveNext = &live, &page.LiveNext
	}
	return s.writeHeld(w, r, http.StatusOK, out, feedBytes(page))
}

// feedBytes is what a feed page's items and live records hold.
func feedBytes(page engine.FeedPage) int64 {
	n := historyBytes(page.Items)
	for _, rec := range page.Live {
		n += int64(len(rec.Data)+len(rec.Name)+len(rec.Node)+len(rec.Writer)) + 96
	}
	return n
}

// feedItem is the wire form of one item: a history row, its sequence number as seq.
func feedItem(e engine.HistoryEvent) feedItemBody {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return feedItemBody{Seq: e.Sequence, Type: e.Type, Name: nullable(e.Name), Node: nullable(e.Node), Timestamp: apiTime(e.Timestamp), Data: data}
}

// clientGone returns nil for an error that only says the client left (nothing to answer),
// else err.
func clientGone(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// streamFeed serves the event-stream form. The first read answers at once, so an unknown run
// is a 404 (JSON) before any frame is sent.
func (s *Service) streamFeed(w http.ResponseWriter, r *http.Request, feeder engine.RunFeeder, id string, q feedQuery) error {
	ctx := r.Context()
	owner := membudget.OwnerOf(ctx)
	closeStream, err := s.responses.OpenStream(owner)
	if err != nil {
		return err
	}
	defer closeStream()
	deadline, proxied := funchost.Proxied(ctx)
	if funchost.RequestSource(ctx) == funchost.SourceHost && !proxied {
		// Under the Functions host the response goes out whole: one long poll.
		page, _, err := feedUntilDrain(ctx, feeder, id, q.engineQuery(q.wait))
		if err != nil {
			return clientGone(ctx, err)
		}
		hold, err := s.responses.Hold(owner, feedBytes(page))
		if err != nil {
			return err
		}
		defer hold.Release()
		body := s.appendFeedFrames([]byte(sse.RetryFrame(feedRetryMillis)), page, q)
		if len(page.Items) == 0 && len(page.Live) == 0 && !page.End {
			body = append(body, sse.KeepAliveFrame...)
		}
		if err := hold.Grow(int64(len(body))); err != nil {
			return err
		}
		writeEventStreamHeader(w)
		_, _ = w.Write(body)
		return nil
	}
	page, err := feeder.Feed(ctx, id, q.engineQuery(0))
	if err != nil {
		return clientGone(ctx, err)
	}
	writeEventStreamHeader(w)
	rc := http.NewResponseController(w)
	var buf []byte
	var stop time.Time // when a proxied stream ends before functionTimeout (zero: never)
	draining := false  // the server began to shut down: the stream ends after this page
	if proxied {
		buf = append(buf, sse.RetryFrame(feedRetryMillis)...)
		if !deadline.IsZero() {
			stop = time.Now().Add(proxiedStreamSpan(time.Until(deadline)))
		}
	}
	for {
		hold, err := s.responses.Hold(owner, feedBytes(page))
		if err == nil {
			buf = s.appendFeedFrames(buf, page, q)
			q.after, q.liveAfter = page.NextAfter, page.LiveNext
			if len(buf) == 0 && !page.End {
				buf = append(buf, sse.KeepAliveFrame...)
			}
			err = hold.Grow(int64(cap(buf)))
		}
		if err != nil {
			// No room for the next frames: the stream ends, and the client resumes from its
			// Last-Event-ID.
			hold.Release()
			_, body := apierror.Runs.Reply(err)
			_, _ = w.Write(append(append([]byte("event: error\ndata: "), body...), "\n\n"...))
			_ = rc.Flush()
			return nil
		}
		_, err = w.Write(buf)
		hold.Release()
		if err != nil {
			return nil // the client left
		}
		if cap(buf) > 64<<10 {
			buf = nil // a large page's buffer is not kept while the stream idles
		}
		buf = buf[:0]
		_ = rc.Flush()
		if page.End {
			return nil
		}
		wait := feedKeepAlive
		if !stop.IsZero() {
			wait = min(wait, time.Until(stop))
		}
		if draining || (!stop.IsZero() && wait <= 0) {
			// A clean end, the server shutting down or functionTimeout well ahead: the retry
			// frame, no end event (the run goes on), and the client reconnects with its
			// Last-Event-ID.
			_, _ = w.Write([]byte(sse.RetryFrame(feedRetryMillis)))
			_ = rc.Flush()
			return nil
		}
		page, draining, err = feedUntilDrain(ctx, feeder, id, nextQuery(page, q.live, wait))
		if err != nil {
			if clientGone(ctx, err) == nil {
				return nil
			}
			s.logger.ErrorContext(ctx, "durable feed stream failed", "run_id", id, "error", err)
			_, body := apierror.Runs.Reply(publicError(err)) // {"error": "internal error"}, or the run's 404
			_, _ = w.Write(append(append([]byte("event: error\ndata: "), body...), "\n\n"...))
			_ = rc.Flush()
			return nil
		}
	}
}

// errFeedDrain is the cause of a feed wait that the server's shutdown ended.
var errFeedDrain = errors.New("runsapi: the server is shutting down")

// feedUntilDrain reads the feed with q, its wait cut short when the server begins to shut down
// (funchost.UntilDrain): then it answers what there is now, drained true, so the answer ends
// cleanly and the client asks again of an instance still serving.
func feedUntilDrain(ctx context.Context, feeder engine.RunFeeder, id string, q engine.FeedQuery) (engine.FeedPage, bool, error) {
	wctx, stop := funchost.UntilDrain(ctx, errFeedDrain)
	defer stop()
	page, err := feeder.Feed(wctx, id, q)
	if err == nil || ctx.Err() != nil || !funchost.Drained(wctx, errFeedDrain) {
		return page, false, err
	}
	q.Wait = 0
	page, err = feeder.Feed(ctx, id, q)
	return page, true, err
}

// proxiedStreamSpan is how long a proxied event stream lasts when its invocation has left
// before functionTimeout: four fifths of it (8 of the staged 10 minutes), so the response is
// complete with time to spare and the host never restarts the process over a stream.
func proxiedStreamSpan(left time.Duration) time.Duration {
	return left - left/5
}

// appendFeedFrames appends a frame per item of page, and the end frame when the page ends the
// feed. q is the position page was read from: with the live channel, its records come first
// (`event: live`: a step's chunks precede its commit), each frame's id naming both positions.
func (s *Service) appendFeedFrames(dst []byte, page engine.FeedPage, q feedQuery) []byte {
	for _, rec := range page.Live {
		data, err := pyjson.Marshal(liveItem(rec))
		if err != nil { // data is JSON the engine stored; this does not happen
			s.logger.Error("encode live record", "offset", rec.Offset, "error", err)
			data = apierror.Runs.Internal()
		}
		dst = sse.AppendEventID(dst, liveFrameID(q.after, page.Run, rec.Next), "live", data)
	}
	for _, e := range page.Items {
		data, err := pyjson.Marshal(feedItem(e))
		if err != nil { // data is JSON the engine stored; this does not happen
			s.logger.Error("encode durable feed item", "seq", e.Sequence, "error", err)
			data = apierror.Runs.Internal()
		}
		id := feedFrameID(e.Sequence, page.Run)
		if q.live {
			id = liveFrameID(e.Sequence, page.Run, page.LiveNext)
		}
		dst = sse.AppendEventID(dst, id, e.Type, data)
	}
	if page.End {
		end, _ := pyjson.Marshal(feedEndBody{RuntimeStatus: page.Status})
		dst = append(append(append(dst, "event: end\ndata: "...), end...), "\n\n"...)
	}
	return dst
}

// writeEventStreamHeader answers 200 with the headers of an event stream.
func writeEventStreamHeader(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", sse.ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// liveItem is the wire form of one live record: attempt, node, branch and name null where the
// record has none (an end record has none of them), data null but in a chunk.
func liveItem(rec engine.LiveRecord) liveItemBody {
	b := liveItemBody{Offset: rec.Offset, Next: rec.Next, Kind: rec.Kind, Writer: rec.Writer, Step: rec.Step,
		Node: nullable(rec.Node), Name: nullable(rec.Name), Data: rec.Data}
	if rec.Attempt > 0 {
		b.Attempt = &rec.Attempt
	}
	if rec.Branch >= 0 {
		b.Branch = &rec.Branch
	}
	if len(b.Data) == 0 {
		b.Data = json.RawMessage("null")
	}
	return b
}
