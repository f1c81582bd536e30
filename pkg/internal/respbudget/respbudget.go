// Package respbudget bounds what responses hold in memory while they are sent: the bytes of
// bodies being written to clients (per response, per identity and in total) and the event
// streams open (per identity and in total). A body is counted from before it is encoded to the
// end of its write, so a client that reads slowly holds its share and no more; past a bound
// the request is answered 429 before anything is sent, and nothing is changed.
package respbudget

import (
	"context"
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
	// DefaultLoadsPerIdentity and DefaultLoadsTotal bound the answers of unknown size being
	// loaded and encoded at once (HoldLoad): one identity's, and every one's.
	DefaultLoadsPerIdentity = 4
	DefaultLoadsTotal       = 64
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
	// LoadsPerIdentity bounds one identity's answers of unknown size being loaded and encoded
	// at once (HoldLoad); more wait their turn.
	LoadsPerIdentity int
	// LoadsTotal bounds every such answer being loaded and encoded at once (the master key's
	// and those without identity only count here).
	LoadsTotal int
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
	if l.LoadsPerIdentity <= 0 {
		l.LoadsPerIdentity = DefaultLoadsPerIdentity
	}
	if l.LoadsTotal <= 0 {
		l.LoadsTotal = DefaultLoadsTotal
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
	loadsBy   map[string]*loadSlots // an identity's load slots while any is held or awaited

	loads chan struct{} // every load's slot
}

// loadSlots are one identity's load slots; users counts those holding or awaiting one.
type loadSlots struct {
	ch    chan struct{}
	users int
}

// New returns a Budget with limits (zero fields: the defaults).
func New(limits Limits) *Budget {
	l := limits.withDefaults()
	return &Budget{limits: l, bytesBy: map[string]int64{}, streamsBy: map[string]int{}, loadsBy: map[string]*loadSlots{},
		loads: make(chan struct{}, l.LoadsTotal)}
}

// Limits returns the limits in effect, defaults filled in.
func (b *Budget) Limits() Limits { return b.limits }

// Hold is bytes a response holds, counted until Release. The zero Hold counts nothing: its
// methods do nothing.
type Hold struct {
	b      *Budget
	owner  string
	n      int64
	loaded func() // frees the load slot of HoldLoad; nil when none is held
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

// HoldLoad is HoldIn for an answer whose size is known only once it is loaded and encoded (a
// thread's state, a search): it first waits for a load slot (Limits.LoadsPerIdentity of
// owner's, LoadsTotal in all), so that a burst of requests cannot load and encode more
// answers at once than that before the first are counted; later ones then find the bound
// reached and are refused before they load anything. Call Loaded once the answer is counted
// (before writing it); Release frees the slot too. It returns the context's error when ctx
// ends while waiting, holding nothing.
func (b *Budget) HoldLoad(ctx context.Context, h *Hold, owner string, n int64) error {
	*h = Hold{b: b, owner: owner}
	loaded, err := b.loadSlot(ctx, owner)
	if err != nil {
		return err
	}
	h.loaded = loaded
	if err := h.Grow(n); err != nil {
		h.Loaded()
		return err
	}
	return nil
}

// loadSlot waits for a load slot of owner's ("": the total's only) and returns what frees it.
func (b *Budget) loadSlot(ctx context.Context, owner string) (func(), error) {
	var mine *loadSlots
	if owner != "" {
		b.mu.Lock()
		if mine = b.loadsBy[owner]; mine == nil {
			mine = &loadSlots{ch: make(chan struct{}, b.limits.LoadsPerIdentity)}
			b.loadsBy[owner] = mine
		}
		mine.users++
		b.mu.Unlock()
	}
	leave := func() {
		if mine == nil {
			return
		}
		b.mu.Lock()
		if mine.users--; mine.users == 0 {
			delete(b.loadsBy, owner)
		}
		b.mu.Unlock()
	}
	if mine != nil && !acquire(ctx, mine.ch) {
		leave()
		return nil, context.Cause(ctx)
	}
	if !acquire(ctx, b.loads) {
		if mine != nil {
			<-mine.ch
		}
		leave()
		return nil, context.Cause(ctx)
	}
	return func() {
		<-b.loads
		if mine != nil {
			<-mine.ch
		}
		leave()
	}, nil
}

// acquire takes a slot of sem, at once when one is free, else waiting until one is or ctx
// ends (false).
func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// Loaded frees the load slot HoldLoad took (the answer is counted); what h holds stays held.
// It may be called more than once, and on a Hold without a slot.
func (h *Hold) Loaded() {
	if h == nil || h.loaded == nil {
		return
	}
	h.loaded()
	h.loaded = nil
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
	h.Loaded()
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
