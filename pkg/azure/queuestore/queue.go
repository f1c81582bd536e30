package queuestore

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// maxVisibility is the longest visibility timeout or delay Azure accepts (seven days).
const maxVisibility = 7 * 24 * time.Hour

// PoisonSuffix names a queue's poison queue: the Functions host moves a message that failed
// maxDequeueCount times from "<queue>" to "<queue>-poison".
const PoisonSuffix = "-poison"

// Queue is a engine.WorkQueue on one Azure queue, with the host's poison queue next to it
// when opened with Open (engine.PoisonQueuer). Safe for concurrent use.
type Queue struct {
	client *azqueue.QueueClient
	poison *azqueue.QueueClient // nil: no poison queue
}

var (
	_ engine.WorkQueue    = (*Queue)(nil)
	_ engine.PoisonQueuer = (*Queue)(nil)
)

// New returns a Queue on an existing queue (azure.Clients.EnsureQueue creates it), without
// a poison queue.
func New(client *azqueue.QueueClient) *Queue {
	return &Queue{client: client}
}

// Open returns a Queue on the queue of clients' account and its poison queue
// ("<queue>-poison", which the Functions host writes and the engine's repair pass reads),
// creating both if missing. Its error names the queue (from azure.Clients.EnsureQueue).
func Open(ctx context.Context, clients *azure.Clients, queue string) (*Queue, error) {
	qc, err := clients.EnsureQueue(ctx, queue)
	if err != nil {
		return nil, err
	}
	pc, err := clients.EnsureQueue(ctx, queue+PoisonSuffix)
	if err != nil {
		return nil, err
	}
	return &Queue{client: qc, poison: pc}, nil
}

// PoisonQueue implements engine.PoisonQueuer: the poison queue as a Queue (base64 text,
// as the host copies it), or nil for a Queue made with New.
func (q *Queue) PoisonQueue() engine.WorkQueue {
	if q.poison == nil {
		return nil
	}
	return New(q.poison)
}

// seconds rounds d up to whole seconds within [floor, maxVisibility].
func seconds(d time.Duration, floor int32) *int32 {
	d = max(0, min(d, maxVisibility))
	s := max(int32((d+time.Second-1)/time.Second), floor)
	return &s
}

// Enqueue implements engine.WorkQueue.
func (q *Queue) Enqueue(ctx context.Context, body []byte, delay time.Duration) error {
	if len(body) > engine.MaxMessageBytes {
		return fmt.Errorf("enqueue: message of %d bytes: %w", len(body), engine.ErrTooLarge)
	}
	ttl := int32(-1)
	_, err := q.client.EnqueueMessage(ctx, base64.StdEncoding.EncodeToString(body), &azqueue.EnqueueMessageOptions{
		TimeToLive: &ttl, VisibilityTimeout: seconds(delay, 0)})
	if err != nil {
		return fmt.Errorf("enqueue: %w", classify(err))
	}
	return nil
}

// Receive implements engine.WorkQueue. A message whose text is not base64 (written by
// another producer) is returned with its raw text as body.
func (q *Queue) Receive(ctx context.Context, max int, visibility time.Duration) ([]engine.Message, error) {
	if max < 1 || max > engine.MaxReceive {
		return nil, fmt.Errorf("receive: max %d outside 1..%d", max, engine.MaxReceive)
	}
	n := int32(max)
	resp, err := q.client.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: &n, VisibilityTimeout: seconds(visibility, 1)})
	if err != nil {
		return nil, fmt.Errorf("receive: %w", classify(err))
	}
	out := make([]engine.Message, 0, len(resp.Messages))
	for _, m := range resp.Messages {
		if m == nil || m.MessageID == nil || m.PopReceipt == nil {
			continue
		}
		msg := engine.Message{ID: *m.MessageID, PopReceipt: *m.PopReceipt}
		if m.DequeueCount != nil {
			msg.DequeueCount = *m.DequeueCount
		}
		if m.MessageText != nil {
			if b, err := base64.StdEncoding.DecodeString(*m.MessageText); err == nil {
				msg.Body = b
			} else {
				msg.Body = []byte(*m.MessageText)
			}
		}
		out = append(out, msg)
	}
	return out, nil
}

// Delete implements engine.WorkQueue.
func (q *Queue) Delete(ctx context.Context, msg engine.Message) error {
	if msg.ID == "" || msg.PopReceipt == "" {
		return fmt.Errorf("delete message: no id or pop receipt: %w", engine.ErrNotFound)
	}
	if _, err := q.client.DeleteMessage(ctx, msg.ID, msg.PopReceipt, nil); err != nil {
		return fmt.Errorf("delete message %s: %w", msg.ID, classify(err))
	}
	return nil
}

// Extend hides a received message for visibility from now (Update Message) and returns it
// with its new pop receipt; the old receipt is stale afterwards. Errors: ErrNotFound when
// the message is gone or msg's pop receipt is stale; ErrTooLarge when its body exceeds
// engine.MaxMessageBytes.
func (q *Queue) Extend(ctx context.Context, msg engine.Message, visibility time.Duration) (engine.Message, error) {
	if msg.ID == "" || msg.PopReceipt == "" {
		return engine.Message{}, fmt.Errorf("extend message: no id or pop receipt: %w", engine.ErrNotFound)
	}
	if len(msg.Body) > engine.MaxMessageBytes {
		return engine.Message{}, fmt.Errorf("extend message %s: %d bytes: %w", msg.ID, len(msg.Body), engine.ErrTooLarge)
	}
	// Update Message replaces the text: send the same body so the message is unchanged.
	resp, err := q.client.UpdateMessage(ctx, msg.ID, msg.PopReceipt, base64.StdEncoding.EncodeToString(msg.Body),
		&azqueue.UpdateMessageOptions{VisibilityTimeout: seconds(visibility, 0)})
	if err != nil {
		return engine.Message{}, fmt.Errorf("extend message %s: %w", msg.ID, classify(err))
	}
	if resp.PopReceipt == nil {
		return engine.Message{}, fmt.Errorf("extend message %s: the service returned no pop receipt", msg.ID)
	}
	msg.PopReceipt = *resp.PopReceipt
	return msg, nil
}

// sentinelFor maps the kind of a queue service answer to the engine's sentinels. The only
// place that knows what the engine makes of them.
func sentinelFor(k azsdk.Kind) error {
	switch k {
	case azsdk.NotFound: // the message is gone, or its pop receipt is stale
		return engine.ErrNotFound
	case azsdk.TooLarge:
		return engine.ErrTooLarge
	}
	return nil
}

// classify maps queue service errors to the engine's sentinels, without the request URL
// (it may carry a SAS token) or the service's message.
func classify(err error) error { return azsdk.Reduce("queue", err, sentinelFor) }
