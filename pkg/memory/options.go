package memory

import "time"

// Option configures a Store, Queue or PayloadStore.
type Option func(*config)

type config struct {
	clock   func() time.Time
	noETags bool
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
