package membudget

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Limits are the limits of a Budget, in bytes.
type Limits struct {
	// Total bounds what every store holds together. Required (> 0).
	Total int64
	// PerIdentity bounds what one identity's objects hold (threads whose metadata names it
	// as their owner, runs and checkpoints written on its behalf); 0 means no per-identity
	// limit. Objects of no identity (isolation off, the master key) count against Total
	// only.
	PerIdentity int64
}

// Validate reports limits a Budget cannot use.
func (l Limits) Validate() error {
	switch {
	case l.Total <= 0:
		return errors.New("membudget: the total must be positive")
	case l.PerIdentity < 0:
		return errors.New("membudget: the per-identity limit must not be negative")
	case l.PerIdentity > l.Total:
		return errors.New("membudget: the per-identity limit must not exceed the total")
	}
	return nil
}

// ErrExceeded reports a write refused because it would grow the stores past a limit of
// their Budget. Nothing was written. Every refusal is an *ExceededError, which wraps it.
var ErrExceeded = errors.New("membudget: memory budget exceeded")

// ExceededError is a refused write: it would have grown an account holding Used bytes by
// Want bytes, past Limit (the limit for new work when NewWork is set).
type ExceededError struct {
	// Owner is the identity whose limit was hit; "" for the total.
	Owner string
	// Limit, Used and Want are in bytes.
	Limit, Used, Want int64
	// NewWork reports whether the write was new work (admitted within 7/8 of the limit).
	NewWork bool
}

// Error says which limit was hit, with the figures.
func (e *ExceededError) Error() string {
	which := "the total memory budget"
	if e.Owner != "" {
		which = "the memory budget of its identity"
	}
	return fmt.Sprintf("membudget: %d more bytes would pass %s (%d of %d bytes used)", e.Want, which, e.Used, e.Limit)
}

// Unwrap returns ErrExceeded.
func (e *ExceededError) Unwrap() error { return ErrExceeded }

// Budget accounts bytes against Limits. It is safe for concurrent use; the zero value is
// not usable (New).
type Budget struct {
	limits Limits

	mu     sync.Mutex
	total  int64            // guarded by mu
	owners map[string]int64 // bytes per identity ("" included); guarded by mu
	scopes map[string]scope // guarded by mu
}

// scope is what one object (a run, a checkpoint thread) holds and whose it is.
type scope struct {
	owner string
	bytes int64
}

// New returns an empty Budget of limits.
func New(limits Limits) (*Budget, error) {
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	return &Budget{limits: limits, owners: map[string]int64{}, scopes: map[string]scope{}}, nil
}

// Limits returns the budget's limits.
func (b *Budget) Limits() Limits { return b.limits }

// Used returns the bytes accounted in total.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// UsedBy returns the bytes accounted to owner ("" : the objects of no identity).
func (b *Budget) UsedBy(owner string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owners[owner]
}

// Grow accounts n more bytes (n < 0: fewer) to owner ("" : no identity). A growth past a
// limit is refused with an *ExceededError and nothing is accounted; n ≤ 0 is never refused.
// ctx says whether the write is new work (NewWork).
func (b *Budget) Grow(ctx context.Context, owner string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.grow(isNewWork(ctx), isExempt(ctx), owner, true, n)
}

// Charge accounts n more bytes (n < 0: fewer) to scope, an object a store keeps under one
// name (e.g. "run/<id>"), on the identity the scope belongs to: the owner of ctx (NewWork)
// when the scope first holds bytes, until it holds none again. scope "" is what the store
// keeps for many objects (an index): it counts against the total only, as does a release
// (n < 0) of a scope that holds nothing. Refusals as Grow's.
func (b *Budget) Charge(ctx context.Context, scopeName string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	newWork, exempt := isNewWork(ctx), isExempt(ctx)
	sc, ok := b.scopes[scopeName]
	if scopeName == "" || !ok && n < 0 {
		return b.grow(newWork, exempt, "", false, n)
	}
	if !ok {
		sc.owner = OwnerOf(ctx)
	}
	if err := b.grow(newWork, exempt, sc.owner, true, n); err != nil {
		return err
	}
	sc.bytes += n
	if sc.bytes <= 0 {
		delete(b.scopes, scopeName)
	} else {
		b.scopes[scopeName] = sc
	}
	return nil
}

// ScopeOwner returns the identity scope counts against, and whether it holds bytes.
func (b *Budget) ScopeOwner(scopeName string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sc, ok := b.scopes[scopeName]
	return sc.owner, ok
}

// Crowded reports whether owner's objects hold more than three quarters of their limit
// (for owner "", no identity: whether everything together holds more than three quarters of
// the total): what a store's retention should bring back below by removing owner's own
// oldest finished objects, before new work is refused at seven eighths.
func (b *Budget) Crowded(owner string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	used, limit := b.total, b.limits.Total
	if owner != "" {
		used = b.owners[owner]
		if b.limits.PerIdentity > 0 {
			limit = b.limits.PerIdentity
		}
	}
	return used > limit-limit/4
}

// Admits reports whether new work on behalf of ctx's owner (OwnerOf) may grow the stores by
// n bytes now (n < 1 counts as 1: whether any new work fits): nil when n fits within 7/8 of
// the total and of the owner's limit, else the *ExceededError (NewWork set) a write of n
// bytes would meet. Nothing is accounted. The HTTP surfaces ask it before reading the body
// of a request that creates new work, with the body's declared length, so that a request
// the budget cannot take is refused without being read; the writes it makes are still
// accounted (and may still be refused) as they happen.
func (b *Budget) Admits(ctx context.Context, n int64) error {
	n = max(n, 1)
	owner := OwnerOf(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := check(true, "", b.total, b.limits.Total, n); err != nil {
		return err
	}
	if owner != "" && b.limits.PerIdentity > 0 {
		return check(true, owner, b.owners[owner], b.limits.PerIdentity, n)
	}
	return nil
}

// grow applies n to the total and, when account, to owner's account, unless it passes a
// limit (exempt: never refused). b.mu must be held.
func (b *Budget) grow(newWork, exempt bool, owner string, account bool, n int64) error {
	if n > 0 && !exempt {
		if err := check(newWork, "", b.total, b.limits.Total, n); err != nil {
			return err
		}
		if account && owner != "" && b.limits.PerIdentity > 0 {
			if err := check(newWork, owner, b.owners[owner], b.limits.PerIdentity, n); err != nil {
				return err
			}
		}
	}
	b.total += n
	if account {
		if v := b.owners[owner] + n; v > 0 {
			b.owners[owner] = v
		} else {
			delete(b.owners, owner)
		}
	}
	return nil
}

// check refuses growing used by n past limit, or past 7/8 of it for new work.
func check(newWork bool, owner string, used, limit, n int64) error {
	if newWork {
		limit -= limit / 8
	}
	if used+n > limit {
		return &ExceededError{Owner: owner, Limit: limit, Used: used, Want: n, NewWork: newWork}
	}
	return nil
}

type workKey struct{}

// work marks a context as a caller's request.
type work struct{ owner string }

// NewWork returns ctx marked as a caller's request on behalf of owner (its identity under
// per-user isolation; "" for none or the master key): the writes made with it are new work,
// refused past 7/8 of the limits, and the objects they create count against owner. The HTTP
// surfaces mark their requests; the engine's dispatcher does not, so a run's steps are not
// new work.
func NewWork(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, workKey{}, work{owner: owner})
}

// OwnerOf returns the owner NewWork put in ctx, "" when none.
func OwnerOf(ctx context.Context) string {
	w, _ := ctx.Value(workKey{}).(work)
	return w.owner
}

type exemptKey struct{}

// Exempt returns ctx marked as a write that makes room: a cancel of a run (its final status
// and reason) and a purge's, which must land whatever the budget holds, or nobody could free
// it. Its growth is accounted, to the scope's owner as any other, but never refused, so it may
// take the stores past their limits by what it adds; a store keeps that small (a cancel's
// reason is cut short when a write needs the exemption).
func Exempt(ctx context.Context) context.Context { return context.WithValue(ctx, exemptKey{}, true) }

func isExempt(ctx context.Context) bool {
	v, _ := ctx.Value(exemptKey{}).(bool)
	return v
}

func isNewWork(ctx context.Context) bool {
	_, ok := ctx.Value(workKey{}).(work)
	return ok
}
