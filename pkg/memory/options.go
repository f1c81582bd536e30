package memory

import (
	"time"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Option configures a Store, Queue, PayloadStore or LiveStore.
type Option func(*config)

type config struct {
	clock   func() time.Time
	noETags bool
	budget  *membudget.Budget
}

// WithBudget makes a Store, PayloadStore or LiveStore account the bytes it holds on b, and
// refuse a write past b's limits (engine.ErrStorageFull and a *membudget.ExceededError:
// nothing is written). A Store counts a run's own rows (engine.RunRow), a PayloadStore a
// run's payloads and a LiveStore a run's live logs against the identity the run was started
// for (membudget.NewWork), and the Store the rows it keeps about many runs (the run index)
// against the total only. Give the stores of one engine the same budget. The engine then
// applies its retention per owner (engine.RunAccounts).
func WithBudget(b *membudget.Budget) Option {
	return func(c *config) { c.budget = b }
}

// WithoutETags makes a Store's Submit return "" for every ETag, as a backend that cannot
// learn the ETags of a transaction does (the engine.Store contract allows it; the Azure
// Table SDK's batch reply carries none). Reads still return ETags. It exists so that the
// engine's tests also run against such a store.
func WithoutETags() Option {
	return func(c *config) { c.noETags = true }
}

// WithClock sets the clock used for timestamps and visibility timeouts (default time.Now).
func WithClock(clock func() time.Time) Option {
	return func(c *config) {
		if clock != nil {
			c.clock = clock
		}
	}
}

func newConfig(opts []Option) config {
	c := config{clock: time.Now}
	for _, o := range opts {
		o(&c)
	}
	return c
}
