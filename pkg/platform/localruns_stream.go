package platform

import (
	"context"
	"fmt"
	"slices"
)

var _ RunStreams = (*LocalRuns)(nil)

// RunStream implements RunStreams: a run's stream is kept in memory with the run (and
// forgotten with it), at most LocalRunsOptions.MaxStreamBytes for all runs together. Errors:
// ErrRunNotFound.
func (l *LocalRuns) RunStream(_ context.Context, threadID, runID string) (StreamChunks, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lr, err := l.lookup(threadID, runID)
	if err != nil {
		return nil, err
	}
	return localChunks{l: l, lr: lr}, nil
}

// localChunks is the stream of one of LocalRuns' runs.
type localChunks struct {
	l  *LocalRuns
	lr *localRun
}

// PutChunk implements StreamChunks: when the streams would pass the bound, the streams of the
// oldest finished runs are dropped first. Errors: ErrStreamStoreFull when that is not enough.
func (c localChunks) PutChunk(_ context.Context, n int, data []byte) error {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > len(c.lr.chunks) {
		return fmt.Errorf("put stream chunk %d of run %s: chunk %d is missing", n, c.lr.run.RunID, len(c.lr.chunks))
	}
	grow := len(data)
	if n < len(c.lr.chunks) {
		grow -= len(c.lr.chunks[n])
	}
	for _, id := range l.order {
		if l.streams+grow <= l.opts.MaxStreamBytes {
			break
		}
		if lr := l.runs[id]; lr != c.lr && lr.run.Status.Terminal() {
			l.dropStreamLocked(lr)
		}
	}
	if l.streams+grow > l.opts.MaxStreamBytes {
		return fmt.Errorf("put stream chunk %d of run %s: %w", n, c.lr.run.RunID, ErrStreamStoreFull)
	}
	data = slices.Clone(data)
	if n == len(c.lr.chunks) {
		c.lr.chunks = append(c.lr.chunks, data)
	} else {
		c.lr.chunks[n] = data
	}
	l.streams += grow
	return nil
}

// Chunk implements StreamChunks.
func (c localChunks) Chunk(_ context.Context, n int) ([]byte, error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if n < 0 || n >= len(c.lr.chunks) {
		return nil, ErrChunkNotFound
	}
	return c.lr.chunks[n], nil
}

// dropStreamLocked forgets a run's stream. Called with mu held.
func (l *LocalRuns) dropStreamLocked(lr *localRun) {
	for _, c := range lr.chunks {
		l.streams -= len(c)
	}
	lr.chunks = nil
}
