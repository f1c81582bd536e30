package sse

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned by Emit after a failed Emit, and after Close.
var ErrClosed = errors.New("sse: stream is closed")

// Encoder appends the JSON data of one event to dst. The Buffer calls it with its lock held,
// one call at a time, so an Encoder may keep scratch space between calls.
type Encoder func(dst []byte, chunk any) ([]byte, error)

// slabSize is the allocation unit of frame storage; frames larger than a slab get their own.
const slabSize = 32 << 10

// Buffer collects the frames of one stream. Counted frames (Start and Emit) never total more
// than its limit, and storage is allocated in slabs, so a request's memory stays near the
// limit. Its methods are safe for concurrent use: the run emits while the request reads.
type Buffer struct {
	max      int
	overflow error
	enc      Encoder
	wake     chan struct{}

	mu         sync.Mutex
	cancel     context.CancelFunc // cancels the run; guarded by mu
	detached   bool               // the request stopped waiting: events are dropped; guarded by mu
	closed     bool               // no more frames accepted; guarded by mu
	overflowed bool               // guarded by mu
	err        error              // first failure; guarded by mu
	total      int                // bytes of counted frames; guarded by mu
	slabs      Frames             // guarded by mu
	scratch    []byte             // frame encoding buffer; guarded by mu
}

// New returns a buffer that accepts counted frames up to maxBytes, encodes event data with
// enc, and answers an event that would pass the limit with overflow (which the run returns).
func New(maxBytes int, overflow error, enc Encoder) *Buffer {
	return &Buffer{max: maxBytes, overflow: overflow, enc: enc, wake: make(chan struct{}, 1)}
}

// SetCancel gives the buffer the run's cancel function, called at the first failure.
func (b *Buffer) SetCancel(cancel context.CancelFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cancel = cancel
}

// Start writes a counted frame before the stream's events (the platform's metadata frame),
// without checking it against the limit.
func (b *Buffer) Start(frame string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += len(frame)
	b.appendLocked([]byte(frame))
}

// Emit appends the frame `event: <event>\ndata: <data>\n\n`, data encoded by the Encoder. It
// returns the overflow error once the counted frames would pass the limit, the encoding error
// when chunk does not encode, and ErrClosed after either or after Close; each failure cancels
// the run. Once the buffer is detached, events are dropped and Emit returns nil.
func (b *Buffer) Emit(event string, chunk any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.detached {
		return nil // nobody reads the frames any more; the run goes on to its end
	}
	if b.closed {
		if b.overflowed {
			return b.overflow
		}
		return ErrClosed
	}
	f := append(append(append(b.scratch[:0], "event: "...), event...), "\ndata: "...)
	f, err := b.enc(f, chunk)
	if err != nil {
		b.failLocked(fmt.Errorf("encode stream event: %w", err))
		return b.err
	}
	f = append(f, "\n\n"...)
	b.scratch = f
	if b.total+len(f) > b.max {
		b.overflowed = true
		b.failLocked(b.overflow)
		return b.overflow
	}
	b.total += len(f)
	b.appendLocked(f)
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return nil
}

// failLocked stops accepting frames and cancels the run. Called with mu held.
func (b *Buffer) failLocked(err error) {
	if b.err == nil {
		b.err = err
	}
	b.closed = true
	if b.cancel != nil {
		b.cancel()
	}
}

// appendLocked copies frame into slab storage. Called with mu held.
func (b *Buffer) appendLocked(frame []byte) {
	if n := len(b.slabs); n > 0 {
		last := b.slabs[n-1]
		if cap(last)-len(last) >= len(frame) {
			b.slabs[n-1] = append(last, frame...)
			return
		}
	}
	size := max(slabSize, len(frame))
	if rest := b.max - b.total + len(frame); rest < size && rest >= len(frame) {
		size = rest // the last slab only needs what the limit still allows
	}
	b.slabs = append(b.slabs, append(make([]byte, 0, size), frame...))
}

// Close ends the stream with the run's error and returns the run's failure: the overflow
// error when the events passed the limit, else the first encoding or run error, else nil.
// Emit fails from then on.
func (b *Buffer) Close(runErr error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.scratch = nil
	if b.detached {
		b.slabs = nil // the request took its frames
	}
	if runErr != nil && b.err == nil && !errors.Is(runErr, b.overflow) {
		b.err = runErr
	}
	if b.overflowed {
		b.err = b.overflow
	}
	return b.err
}

// Append appends an uncounted frame (an error or end frame); nothing once detached.
func (b *Buffer) Append(frame string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.detached {
		b.appendLocked([]byte(frame))
	}
}

// Events reports whether any event was accepted (a failure before one can still be answered
// with a status of its own instead of a stream).
func (b *Buffer) Events() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total > 0
}

// Frames returns the frames written so far. They never change; later frames are not in them.
func (b *Buffer) Frames() Frames {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.framesLocked()
}

func (b *Buffer) framesLocked() Frames {
	n := len(b.slabs)
	out := make(Frames, n)
	copy(out, b.slabs)
	if n > 0 {
		out[n-1] = out[n-1][:len(out[n-1]):len(out[n-1])]
	}
	return out
}

// Since returns a copy of the frames' bytes after the first n.
func (b *Buffer) Since(n int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.slabs.From(n)
}

// Wake signals (without blocking, coalesced) each accepted event, for a reader that sends
// frames as they come.
func (b *Buffer) Wake() <-chan struct{} { return b.wake }

// Detach is called when the request stopped waiting for the run: it returns the frames
// written so far, and from then on the run's events are dropped (Emit returns nil), so the
// run goes on to its end.
func (b *Buffer) Detach() Frames {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.detached = true
	return b.framesLocked()
}

// Frames is a stream's frames, in slabs.
type Frames [][]byte

// From returns a copy of the bytes after the first n.
func (f Frames) From(n int) []byte {
	var out []byte
	for _, s := range f {
		if n >= len(s) {
			n -= len(s)
			continue
		}
		out = append(out, s[n:]...)
		n = 0
	}
	return out
}
