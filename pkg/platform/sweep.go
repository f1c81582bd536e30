package platform

import (
	"context"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// Defaults of the stale-lock sweep.
const (
	// DefaultStaleLockAge is how long a thread may stay busy before the sweep resets it.
	DefaultStaleLockAge = time.Hour
	// DefaultStaleLockSchedule runs the sweep every five minutes (NCRONTAB, seconds first).
	DefaultStaleLockSchedule = "0 */5 * * * *"
	// StaleLockFunction is the name of the timer-triggered sweep.
	StaleLockFunction = "fg_platform_reset_stale_locks"
)

// sweepFunction is the timer-triggered function that moves threads left busy by a crashed
// host to error (reset_stale_locks).
func (s *Service) sweepFunction(schedule string, age time.Duration) funchost.TimerFunction {
	return funchost.TimerFunction{
		Name: StaleLockFunction, Schedule: schedule,
		Handler: func(ctx context.Context, _ funchost.TimerInfo) (funchost.Outputs, error) {
			n, err := s.ResetStaleLocks(ctx, age)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				s.logger.Warn("reset stale thread locks", "count", n, "older_than", age.String())
			}
			return nil, nil
		},
	}
}

// ResetStaleLocks moves threads busy for longer than olderThan to status error and returns
// how many moved. The timer function StaleLockFunction calls it.
func (s *Service) ResetStaleLocks(ctx context.Context, olderThan time.Duration) (int, error) {
	n, err := s.store.ResetStaleLocks(ctx, olderThan, threads.StatusError, s.now())
	if err != nil {
		return n, fmt.Errorf("reset stale thread locks: %w", err)
	}
	return n, nil
}
