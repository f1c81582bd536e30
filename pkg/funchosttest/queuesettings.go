package funchosttest

import (
	"fmt"
	"runtime"
	"time"
)

// QueueSettings are extensions.queues settings of the queue listener (QueuesOptions). Zero
// values mean the host's defaults, which the methods apply.
type QueueSettings struct {
	// BatchSize is batchSize: messages received per poll, 1–32 (default 16).
	BatchSize int
	// NewBatchThreshold is newBatchThreshold: the listener polls again once at most this
	// many messages are still being processed. nil means batchSize/2 × processor count.
	NewBatchThreshold *int
	// VisibilityTimeout is visibilityTimeout: how long a failed message stays hidden before
	// its retry (default 0).
	VisibilityTimeout time.Duration
	// MaxPollingInterval is maxPollingInterval: the longest back-off between polls of an
	// empty queue, at least 100 ms (default 1 min).
	MaxPollingInterval time.Duration
}

// Queue listener defaults and limits (QueuesOptions, QueuePollingIntervals).
const (
	defaultQueueBatchSize     = 16
	maxQueueBatchSize         = 32
	defaultMaxPollingInterval = time.Minute
	minPollingInterval        = 100 * time.Millisecond
)

// Batch returns the batch size in effect.
func (q QueueSettings) Batch() int {
	if q.BatchSize == 0 {
		return defaultQueueBatchSize
	}
	return q.BatchSize
}

// Threshold returns the new-batch threshold in effect.
func (q QueueSettings) Threshold() int {
	if q.NewBatchThreshold != nil {
		return *q.NewBatchThreshold
	}
	return q.Batch() / 2 * runtime.NumCPU()
}

// MaxPolling returns the maximum polling interval in effect.
func (q QueueSettings) MaxPolling() time.Duration {
	if q.MaxPollingInterval == 0 {
		return defaultMaxPollingInterval
	}
	return q.MaxPollingInterval
}

// parseQueueSettings validates extensions.queues listener settings as QueuesOptions does.
func parseQueueSettings(q *QueueSettings, batch, threshold *int, visibility, maxPolling string) error {
	if batch != nil {
		if *batch < 1 || *batch > maxQueueBatchSize {
			return fmt.Errorf("queues.batchSize %d: want 1 to %d", *batch, maxQueueBatchSize)
		}
		q.BatchSize = *batch
	}
	if threshold != nil {
		if *threshold < 0 {
			return fmt.Errorf("queues.newBatchThreshold %d: want 0 or more", *threshold)
		}
		q.NewBatchThreshold = threshold
	}
	if visibility != "" {
		d, err := parseTimeSpan(visibility)
		if err != nil {
			return fmt.Errorf("queues.visibilityTimeout: %w", err)
		}
		q.VisibilityTimeout = d
	}
	if maxPolling != "" {
		d, err := parseTimeSpan(maxPolling)
		if err != nil {
			return fmt.Errorf("queues.maxPollingInterval: %w", err)
		}
		if d < minPollingInterval {
			return fmt.Errorf("queues.maxPollingInterval: MaxPollingInterval must not be less than %v", minPollingInterval)
		}
		q.MaxPollingInterval = d
	}
	return nil
}
