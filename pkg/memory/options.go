package memory

import "time"

// Option configures a Store, Queue or PayloadStore.
type Option func(*config)

type config struct {
	clock func() time.Time
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
