package platform

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/sse"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// How often a join checks the store for a run that executes elsewhere (or has not begun):
// from minPoll, doubling up to maxPoll while nothing comes.
const (
	minPoll = 100 * time.Millisecond
	maxPoll = time.Second
)

// joinRequest is what GET .../runs/{run_id}/stream asks for.
type joinRequest struct {
	tid, rid string
	// after is the Last-Event-ID: events up to it are not sent again (0: from the start).
	after int64
	// events are the event names asked for (stream_mode); nil means all.
	events []string
	// cancelOnDisconnect cancels the run when the client leaves before its end.
	cancelOnDisconnect bool
}

// parseJoin reads the join's path, Last-Event-ID header and query.
func parseJoin(r *http.Request) (*joinRequest, error) {
	tid, rid, err := pathRun(r)
	if err != nil {
		return nil, err
	}
	j := &joinRequest{tid: tid, rid: rid}
	if v := strings.TrimSpace(r.Header.Get("Last-Event-ID")); v != "" && v != "-1" {
		if j.after, err = strconv.ParseInt(v, 10, 64); err != nil || j.after < 0 {
			return nil, apierror.Invalid("Last-Event-ID", "Input should be an event id of this stream (a non-negative integer) or -1")
		}
	}
	q := r.URL.Query()
	for _, m := range q["stream_mode"] {
		if m == "" {
			return nil, apierror.Invalid("stream_mode", "Input should be a non-empty string")
		}
		j.events = append(j.events, eventName(m))
	}
	switch strings.ToLower(q.Get("cancel_on_disconnect")) {
	case "", "0", "false":
	case "1", "true":
		j.cancelOnDisconnect = true
	default:
		return nil, apierror.Invalid("cancel_on_disconnect", "Input should be a valid boolean")
	}
	return j, nil
}

// wants reports whether the join sends frames of event: the metadata, error and end frames
// always, the others when stream_mode asked for them or named no mode.
func (j *joinRequest) wants(event string) bool {
	switch event {
	case "metadata", "error", "end":
		return true
	}
	return j.events == nil || slices.Contains(j.events, event)
}

// serveRunStream joins a background run's stream (the SDK's runs.joinStream): the frames of
// the run from the start, or after Last-Event-ID, then live ones until the run ends, each with
// its id. Past the wait bound the answer ends without the end frame; Location names this
// route, relative to the API root as the SDKs read it, so that they join again with the last
// id they saw.
func (s *Service) serveRunStream(w http.ResponseWriter, r *http.Request) {
	j, err := parseJoin(r)
	if err == nil {
		err = s.checkThread(r.Context(), j.tid)
	}
	if err == nil {
		_, err = s.runs.Get(r.Context(), j.tid, j.rid)
		err = runError(err, j.rid)
	}
	var chunks StreamChunks
	if err == nil {
		rs, ok := s.runs.(RunStreams)
		if !ok {
			err = apierror.New(apierror.ErrNotImplemented, "Joining a run's stream is not supported by this run backend")
		} else {
			chunks, err = rs.RunStream(r.Context(), j.tid, j.rid)
		}
	}
	var closeStream func()
	if err == nil {
		closeStream, err = s.openStream(r) // one of the caller's open event streams (respond.go)
	}
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	defer closeStream()
	h := w.Header()
	h.Set("Location", "/threads/"+url.PathEscape(j.tid)+"/runs/"+url.PathEscape(j.rid)+"/stream")
	s.writeSSEHeader(w, j.tid, j.rid)
	f := &follower{s: s, j: j, w: w, rc: http.NewResponseController(w), chunks: chunks, owner: membudget.OwnerOf(r.Context())}
	ctx, cancel := s.waitContext(r.Context())
	defer cancel()
	if f.follow(ctx) || r.Context().Err() == nil || !j.cancelOnDisconnect {
		return
	}
	err = s.runs.Cancel(context.WithoutCancel(r.Context()), j.tid, j.rid, false)
	if err != nil && !errors.Is(err, ErrRunFinished) {
		s.logger.Warn("cancel a run whose stream's client left", "thread_id", j.tid, "run_id", j.rid, "error", err)
	}
}

// follower sends one join's frames.
type follower struct {
	s      *Service
	j      *joinRequest
	w      http.ResponseWriter
	rc     *http.ResponseController
	chunks StreamChunks
	owner  string // whose share of the response budget its writes count against

	last  int64 // the last id met
	zeros int   // frames without id met after last
	it    pass  // where the current pass over a source is
}

// pass is a reading of a stream from its start (the stored chunks, or a live log): the last
// id met in it and the frames without id met since.
type pass struct {
	last  int64
	zeros int
}

// follow sends the run's frames until its end frame (true), the context's end or a failure
// to read (false).
func (f *follower) follow(ctx context.Context) bool {
	var live *runLog
	livePos, chunk, poll, over := 0, 0, minPoll, false
	for {
		if live == nil {
			if live = f.s.liveLog(f.j.rid); live != nil {
				f.it, livePos = pass{}, 0
			}
		}
		if live != nil {
			fs, _, changed := live.from(livePos)
			livePos += len(fs)
			if f.send(fs) {
				return true
			}
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return false
			}
		}
		data, err := f.chunks.Chunk(ctx, chunk)
		if err == nil {
			fs, perr := parseFrames(data)
			if perr != nil {
				f.s.logger.Error("join a run's stream: unreadable chunk", "run_id", f.j.rid, "chunk", chunk)
				return false
			}
			chunk++
			if f.send(fs) {
				return true
			}
			poll = minPoll
			continue
		}
		if !errors.Is(err, ErrChunkNotFound) {
			if ctx.Err() == nil {
				f.s.logger.Error("join a run's stream", "run_id", f.j.rid, "error", err)
			}
			return false
		}
		run, err := f.s.runs.Get(ctx, f.j.tid, f.j.rid)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				f.s.logger.Error("join a run's stream", "run_id", f.j.rid, "error", err)
			}
			return false
		case run.Status.Terminal() && over:
			// Ended without an end frame stored (cancelled before it ran, or its last
			// writes failed): end the stream.
			f.write([]byte(platformEndFrame))
			return true
		case run.Status.Terminal():
			over = true // its last chunks may have been stored since the read: read again
			continue
		}
		t := time.NewTimer(poll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		poll = min(2*poll, maxPoll)
	}
}

// send sends the frames of the current pass the client has not seen and wants, and reports
// whether the end frame was among them.
func (f *follower) send(fs []frame) bool {
	var out []byte
	ended := false
	for _, fr := range fs {
		fresh := false
		if fr.id > 0 {
			f.it.last, f.it.zeros = fr.id, 0
			if fresh = fr.id > f.last; fresh {
				f.last, f.zeros = fr.id, 0
			}
		} else {
			f.it.zeros++
			if fresh = f.it.last > f.last || f.it.last == f.last && f.it.zeros > f.zeros; fresh {
				f.zeros = f.it.zeros
			}
		}
		if !fresh {
			continue
		}
		// Frames without id come after the last id before them; the end always comes.
		resumed := fr.id > f.j.after || fr.id == 0 && (f.it.last >= f.j.after || fr.event == "end")
		if resumed && f.j.wants(fr.event) {
			out = append(out, fr.text...)
		}
		if fr.event == "end" {
			ended = true
			break
		}
	}
	return !f.write(out) || ended
}

// write sends b, counted against the caller's share of the response budget until written.
// When the budget has no room for it, it sends an error frame instead and reports false: the
// stream ends without its end frame, and the client joins again with Last-Event-ID.
func (f *follower) write(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	hold, err := f.s.responses.Hold(f.owner, int64(len(b)))
	if err != nil {
		msg, _ := apierror.Message(err)
		_, _ = f.w.Write([]byte(sse.ErrorFrame(msg)))
		_ = f.rc.Flush()
		return false
	}
	_, _ = f.w.Write(b)
	hold.Release()
	_ = f.rc.Flush()
	return true
}
