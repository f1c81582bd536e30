// Package respbudget bounds what responses hold in memory while they are sent: the bytes of
// bodies being written to clients (per response, per identity and in total) and the event
// streams open (per identity and in total). A body is counted from before it is encoded to the
// end of its write, so a client that reads slowly holds its share and no more; past a bound
// the request is answered 429 before anything is sent, and nothing is changed.
package respbudget

import (
	"sync"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// Defaults of Limits.
const (
	DefaultBytesPerResponse   = 32 << 20
	DefaultBytesPerIdentity   = 64 << 20
	DefaultBytesTotal         = 256 << 20
	DefaultStreamsPerIdentity = 32
	DefaultStreamsTotal       = 512
)

// Limits are the bounds of a Budget; a zero field takes its default.
type Limits struct {
	// BytesPerResponse bounds one response's body: what one connection holds at a time.
	BytesPerResponse int64
	// BytesPerIdentity bounds the bodies one identity's responses hold together.
	BytesPerIdentity int64
	// BytesTotal bounds the bodies every response holds together.
	BytesTotal int64
	// StreamsPerIdentity bounds the event streams one identity holds open.
	StreamsPerIdentity int
	// StreamsTotal bounds the event streams open together.
	StreamsTotal int
}

func (l Limits) withDefaults() Limits {
	if l.BytesPerResponse <= 0 {
		l.BytesPerResponse = DefaultBytesPerResponse
	}
	if l.BytesPerIdentity <= 0 {
		l.BytesPerIdentity = DefaultBytesPerIdentity
	}
	if l.BytesTotal <= 0 {
		l.BytesTotal = DefaultBytesTotal
	}
	if l.StreamsPerIdentity <= 0 {
		l.StreamsPerIdentity = DefaultStreamsPerIdentity
	}
	if l.StreamsTotal <= 0 {
		l.StreamsTotal = DefaultStreamsTotal
	}
	return l
}

// Messages of the refusals (429, or 413 for one response past BytesPerResponse).
const (
	IdentityBytesMessage   = "too many requests: your identity's responses still being sent hold the most memory one identity may; read them, or retry once they are received"
	TotalBytesMessage      = "too many requests: the responses still being sent hold the most memory the server allows for them; retry later"
	ResponseBytesMessage   = "response too large: ask for fewer items (limit) and follow continuation_token"
	IdentityStreamsMessage = "too many requests: your identity holds the most event streams open one identity may; close one, or retry later"
	TotalStreamsMessage    = "too many requests: the server holds the most event streams open it allows; retry later"
)

// RetryAfter is the Retry-After (seconds) of a 429 of the budget, on every surface.
const RetryAfter = "1"

// LoadEstimate is what a route reserves (Hold) before it loads an answer whose size it cannot
// know yet (a thread's state, a search): an identity or a server whose answers already fill
// their bound is refused before anything is loaded. The answer's own bytes are counted once
// encoded.
const LoadEstimate = 64 << 10

// Budget counts what responses hold. The zero value is not usable: call New.
type Budget struct {
	limits Limits

	mu        sync.Mutex
	bytes     int64
	bytesBy   map[string]int64
	streams   int
	streamsBy map[string]int
}

// New returns a Budget with limits (zero fields: the defaults).
func New(limits Limits) *Budget {
	return &Budget{limits: limits.withDefaults(), bytesBy: map[string]int64{}, streamsBy: map[string]int{}}
}

// Limits returns the limits in effect, defaults filled in.
func (b *Budget) Limits() Limits { return b.limits }

// Hold is bytes a response holds, counted until Release. The zero Hold counts nothing: its
// methods do nothing.
type Hold struct {
	b     *Budget
	owner string
	n     int64
}

// Hold counts n bytes of a response of owner ("": an admin or no identity, counted in the total
// only). It refuses, counting nothing, with a 429 (*apierror.Error) past the owner's or the
// total bound, or a 413 past the bound of one response.
func (b *Budget) Hold(owner string, n int64) (*Hold, error) {
	h := &Hold{b: b, owner: owner}
	return h, h.Grow(n)
}

// HoldIn is Hold into h, a Hold kept inside a larger value (no allocation). h must hold
// nothing (its zero value, or released).
func (b *Budget) HoldIn(h *Hold, owner string, n int64) error {
	*h = Hold{b: b, owner: owner}
	return h.Grow(n)
}

// Grow counts n more bytes, or refuses them as Hold does (what is held already stays held).
func (h *Hold) Grow(n int64) error {
	if h == nil || h.b == nil || n <= 0 {
		return nil
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case h.n+n > b.limits.BytesPerResponse:
		return apierror.New(apierror.ErrTooLarge, ResponseBytesMessage)
	case h.owner != "" && b.bytesBy[h.owner]+n > b.limits.BytesPerIdentity:
		return apierror.New(apierror.ErrTooManyRequests, IdentityBytesMessage)
	case b.bytes+n > b.limits.BytesTotal:
		return apierror.New(apierror.ErrTooManyRequests, TotalBytesMessage)
	}
	h.n += n
	b.bytes += n
	if h.owner != "" {
		b.bytesBy[h.owner] += n
	}
	return nil
}

// Add counts n more bytes whatever the bounds: an answer whose work is done (a graph run's
// output) is sent, and what it holds is seen by the requests that follow, which the bounds
// then refuse.
func (h *Hold) Add(n int64) {
	if h == nil || h.b == nil || n <= 0 {
		return
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	h.n += n
	b.bytes += n
	if h.owner != "" {
		b.bytesBy[h.owner] += n
	}
}

// Shrink stops counting n of the bytes h holds (at most all of them): the part of a body
// already written, or a reservation that turned out larger than what it was for.
func (h *Hold) Shrink(n int64) {
	if h == nil || h.b == nil || n <= 0 {
		return
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	h.shrinkLocked(min(n, h.n))
}

// Held returns the bytes h counts.
func (h *Hold) Held() int64 {
	if h == nil || h.b == nil {
		return 0
	}
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	return h.n
}

// Release stops counting what h holds. It may be called more than once.
func (h *Hold) Release() {
	if h == nil || h.b == nil {
		return
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	h.shrinkLocked(h.n)
}

// shrinkLocked stops counting n of h's bytes; b.mu is held.
func (h *Hold) shrinkLocked(n int64) {
	b := h.b
	b.bytes -= n
	if h.owner != "" {
		if b.bytesBy[h.owner] -= n; b.bytesBy[h.owner] <= 0 {
			delete(b.bytesBy, h.owner)
		}
	}
	h.n -= n
}

// OpenStream counts an event stream of owner ("": counted in the total only) until the
// returned func is called, or refuses it with a 429 past the owner's or the total bound.
func (b *Budget) OpenStream(owner string) (closeStream func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case owner != "" && b.streamsBy[owner] >= b.limits.StreamsPerIdentity:
		return nil, apierror.New(apierror.ErrTooManyRequests, IdentityStreamsMessage)
	case b.streams >= b.limits.StreamsTotal:
		return nil, apierror.New(apierror.ErrTooManyRequests, TotalStreamsMessage)
	}
	b.streams++
	if owner != "" {
		b.streamsBy[owner]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.streams--
			if owner != "" {
				if b.streamsBy[owner]--; b.streamsBy[owner] <= 0 {
					delete(b.streamsBy, owner)
				}
			}
		})
	}, nil
}

// Used returns the bytes held and the streams open, in total.
func (b *Budget) Used() (bytes int64, streams int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes, b.streams
}

// UsedBy returns the bytes held and the streams open by owner's responses.
func (b *Budget) UsedBy(owner string) (bytes int64, streams int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytesBy[owner], b.streamsBy[owner]
}
