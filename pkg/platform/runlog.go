package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/sse"
)

// Storing a run's stream: frames go to a chunk that is stored once it holds chunkBytes, or
// flushDelay after its first frame (for the first timedChunks chunks: later ones wait for
// chunkBytes), or when the run ends. So a stream of up to max bytes has at most timedChunks +
// max/chunkBytes + 1 chunks, what a join reads at most. A failed write is tried again with the
// same bytes before the next chunk; at the end of the run, up to endAttempts times.
const (
	chunkBytes  = 64 << 10
	timedChunks = 60
	endAttempts = 3
)

// flushDelay is a variable for tests.
var flushDelay = time.Second

// runLog is the stream of one background run executing in this process: its frames, which
// readers in this process follow live (liveLog), stored in chunks as they come (StreamChunks)
// for readers anywhere and later. Counted frames (metadata and events) total at most max
// bytes; past it the overflow error frame is written once and later events are dropped, while
// the run goes on.
type runLog struct {
	runID  string
	chunks StreamChunks // nil: frames are not stored
	max    int
	enc    sse.Encoder
	logger *slog.Logger
	kick   chan struct{} // frames to store (capacity 1)
	urgent chan struct{} // a full chunk, or the end: store now (capacity 1)
	done   chan struct{} // closed when the storing goroutine ended

	mu         sync.Mutex
	frames     []frame       // guarded by mu
	counted    int           // bytes of counted frames; guarded by mu
	nextID     int64         // guarded by mu
	overflowed bool          // guarded by mu
	ended      bool          // the end frame is written; guarded by mu
	replayed   bool          // the stored stream had ended already: nothing is added; guarded by mu
	changed    chan struct{} // closed and replaced at each new frame; guarded by mu
	stored     int           // frames[:stored] are sealed into chunks; guarded by mu
	unstored   int           // bytes of frames[stored:]; guarded by mu
	nextChunk  int           // guarded by mu
	pending    []byte        // a sealed chunk not stored yet; guarded by mu
}

// openRunLog starts the stream of run's execution: what an earlier execution stored, if any,
// then the metadata frame. It is registered as the run's live log until closeRunLog.
func (s *Service) openRunLog(ctx context.Context, run Run) *runLog {
	l := &runLog{runID: run.RunID, max: s.maxStream, enc: frameEncoder(run.Request.modes()), logger: s.logger,
		kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1), done: make(chan struct{}),
		nextID: 1, changed: make(chan struct{})}
	if rs, ok := s.runs.(RunStreams); ok {
		chunks, err := rs.RunStream(ctx, run.ThreadID, run.RunID)
		if err == nil {
			err = l.load(ctx, chunks)
		}
		if err != nil {
			s.logger.Warn("background run: its stream is not stored", "run_id", run.RunID, "error", err)
		}
	}
	l.mu.Lock()
	if !l.replayed {
		data := []byte(`{"run_id": "` + run.RunID + `"}`)
		l.addLocked(appendFrame(nil, l.nextID, "metadata", data), "metadata", true)
	}
	l.mu.Unlock()
	s.liveMu.Lock()
	s.live[run.RunID] = l
	s.liveMu.Unlock()
	go l.store(context.WithoutCancel(ctx))
	return l
}

// load reads what earlier executions of the run stored (an execution after a crash goes on
// after it), so ids keep growing and chunks are never written twice.
func (l *runLog) load(ctx context.Context, chunks StreamChunks) error {
	for n := 0; ; n++ {
		data, err := chunks.Chunk(ctx, n)
		if errors.Is(err, ErrChunkNotFound) {
			break
		}
		if err != nil {
			return fmt.Errorf("read stream chunk %d: %w", n, err)
		}
		fs, err := parseFrames(data)
		if err != nil {
			return fmt.Errorf("read stream chunk %d: %w", n, err)
		}
		for _, f := range fs {
			l.frames = append(l.frames, f)
			switch {
			case f.id > 0:
				l.nextID, l.counted = f.id+1, l.counted+len(f.text)
			case f.event == "end":
				l.replayed, l.ended = true, true
			}
		}
		l.nextChunk = n + 1
	}
	l.chunks, l.stored = chunks, len(l.frames)
	return nil
}

// addLocked appends a frame and wakes the readers and the storing goroutine.
func (l *runLog) addLocked(text []byte, event string, counted bool) {
	id := int64(0)
	if counted {
		id, l.nextID, l.counted = l.nextID, l.nextID+1, l.counted+len(text)
	}
	l.frames = append(l.frames, frame{id: id, event: event, text: text})
	close(l.changed)
	l.changed = make(chan struct{})
	signal(l.kick)
	if l.unstored += len(text); l.unstored >= chunkBytes || event == "end" {
		signal(l.urgent)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// emit writes one event of the run. It fails only when the event does not encode (the run
// fails, as a runs/stream does); an event past the bound is dropped.
func (l *runLog) emit(event string, chunk any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.replayed || l.ended || l.overflowed {
		return nil
	}
	data, err := l.enc(nil, chunk)
	if err != nil {
		return fmt.Errorf("encode stream event: %w", err)
	}
	text := appendFrame(nil, l.nextID, event, data)
	if l.counted+len(text) > l.max {
		l.overflowed = true
		l.addLocked([]byte(sse.OverflowFrame(l.max)), "error", false)
		return nil
	}
	l.addLocked(text, event, true)
	return nil
}

// end writes the last frames: the failure frame when the run failed, then the end frame.
func (l *runLog) end(failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if failed {
		l.addLocked([]byte(sse.FailedFrame), "error", false)
	}
	l.ended = true
	l.addLocked([]byte(platformEndFrame), "end", false)
}

// from returns the frames from index i on, whether the log has ended, and a channel closed
// at the next frame.
func (l *runLog) from(i int) ([]frame, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.frames[i:len(l.frames):len(l.frames)], l.ended, l.changed
}

// store writes the frames to chunks as they come, until the log ended and is stored (or its
// last writes failed).
func (l *runLog) store(ctx context.Context) {
	defer close(l.done)
	for failures := 0; ; {
		<-l.kick
		l.mu.Lock()
		ended, timed := l.ended, l.nextChunk < timedChunks
		l.mu.Unlock()
		switch {
		case ended || failures > 0:
		case timed:
			t := time.NewTimer(flushDelay)
			select {
			case <-t.C:
			case <-l.urgent:
			}
			t.Stop()
		default:
			<-l.urgent
		}
		err := l.flush(ctx)
		l.mu.Lock()
		ended, rest := l.ended, l.pending != nil || l.stored < len(l.frames)
		l.mu.Unlock()
		switch {
		case err == nil:
			failures = 0
		case !ended:
			l.logger.Warn("background run: store stream chunk; trying again", "run_id", l.runID, "error", err)
		default:
			if failures++; failures >= endAttempts {
				l.logger.Error("background run: the end of its stream is not stored", "run_id", l.runID, "error", err)
				return
			}
			time.Sleep(time.Duration(failures) * 200 * time.Millisecond)
		}
		if ended && !rest {
			return
		}
		if rest {
			signal(l.kick)
		}
	}
}

// flush seals the frames not yet in a chunk and stores the sealed chunk.
func (l *runLog) flush(ctx context.Context) error {
	l.mu.Lock()
	if l.chunks == nil || l.replayed {
		l.stored, l.unstored, l.pending = len(l.frames), 0, nil
		l.mu.Unlock()
		return nil
	}
	if l.pending == nil && l.stored < len(l.frames) {
		for _, f := range l.frames[l.stored:] {
			l.pending = append(l.pending, f.text...)
		}
		l.stored, l.unstored = len(l.frames), 0
	}
	data, n := l.pending, l.nextChunk
	l.mu.Unlock()
	if data == nil {
		return nil
	}
	if err := l.chunks.PutChunk(ctx, n, data); err != nil {
		return fmt.Errorf("store stream chunk %d of run %s: %w", n, l.runID, err)
	}
	l.mu.Lock()
	l.pending, l.nextChunk = nil, n+1
	l.mu.Unlock()
	return nil
}

// closeRunLog ends the log (when the run did not), waits until it is stored and unregisters
// it: readers then read the stored chunks.
func (s *Service) closeRunLog(l *runLog) {
	l.end(false)
	<-l.done
	s.liveMu.Lock()
	if s.live[l.runID] == l {
		delete(s.live, l.runID)
	}
	s.liveMu.Unlock()
}

// liveLog returns the log of a run executing in this process, or nil.
func (s *Service) liveLog(runID string) *runLog {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return s.live[runID]
}
