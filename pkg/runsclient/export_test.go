package runsclient

import (
	"context"
	"time"
)

// SetSleep replaces how c waits between attempts and reconnections.
func SetSleep(c *Client, sleep func(ctx context.Context, d time.Duration) error) { c.sleep = sleep }
