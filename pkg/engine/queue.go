package engine

import (
	"context"
	"time"
)

// WorkQueue is the engine's work queue: at-least-once delivery of small messages with a
// visibility timeout, shaped after Azure Queue storage. A received message stays invisible
// for the visibility timeout; unless deleted it then becomes visible again with its dequeue
// count increased.
//
// Producers hand over raw bytes; a backend whose consumer expects another encoding (the
// Functions queue trigger expects base64 text) encodes them itself.
//
// Implementations must be safe for concurrent use.
type WorkQueue interface {
	// Enqueue adds a message that becomes visible after delay (0 to MaxDelay; 0: at once).
	// Errors: ErrTooLarge when body exceeds MaxMessageBytes.
	Enqueue(ctx context.Context, body []byte, delay time.Duration) error

	// Receive returns up to max (1–MaxReceive) visible messages, oldest first, hides each for
	// visibility and increments its dequeue count. No visible message is not an error: it
	// returns an empty slice.
	Receive(ctx context.Context, max int, visibility time.Duration) ([]Message, error)

	// Delete removes a received message. Errors: ErrNotFound when the message is gone or
	// msg's pop receipt is stale (the message became visible and was received again).
	Delete(ctx context.Context, msg Message) error

	// Extend hides a received message for another visibility from now (Azure's Update
	// Message) and returns it with its new pop receipt; msg's receipt is stale afterwards. A
	// worker calls it while a step runs, well before the visibility timeout expires, so a
	// healthy slow step is never redelivered. The dequeue count is unchanged. Errors:
	// ErrNotFound when the message is gone or msg's pop receipt is stale.
	Extend(ctx context.Context, msg Message, visibility time.Duration) (Message, error)
}

// PoisonQueuer is an optional capability of a WorkQueue: the queue's poison queue, where
// messages delivered too often end up — the Functions host moves a message to
// "<queue>-poison" after host.json's maxDequeueCount, and the embedded dispatcher does the
// same at Options.MaxDequeueCount. The repair pass (Sweep) reads it and puts back on the
// work queue what still needs to run, so a message that ran out of deliveries (a storage
// outage longer than the delivery budget) never strands its run.
//
// Wrappers of a WorkQueue implement it by forwarding; a queue without a poison queue
// returns nil.
type PoisonQueuer interface {
	// PoisonQueue returns the poison queue (messages as the host copied them: same body,
	// fresh dequeue count), or nil when there is none.
	PoisonQueue() WorkQueue
}

// poisonQueueOf returns q's poison queue, or nil.
func poisonQueueOf(q WorkQueue) WorkQueue {
	if p, ok := q.(PoisonQueuer); ok {
		return p.PoisonQueue()
	}
	return nil
}

// Queue limits.
const (
	// MaxMessageBytes is the largest message body (Azure's 64 KiB holds 48 KiB in base64).
	MaxMessageBytes = 48 << 10
	// MaxReceive is the most messages one Receive returns.
	MaxReceive = 32
	// MaxDelay is the longest delay or visibility timeout a message can have (Azure: 7 days).
	// The engine enqueues longer timers capped at it and re-enqueues them when they come early.
	MaxDelay = 7 * 24 * time.Hour
)

// Message is a received queue message.
type Message struct {
	// ID identifies the message.
	ID string
	// PopReceipt proves the receive; Delete and Extend need the latest one.
	PopReceipt string
	// Body is the message body as enqueued.
	Body []byte
	// DequeueCount counts receives, from 1.
	DequeueCount int64
}
