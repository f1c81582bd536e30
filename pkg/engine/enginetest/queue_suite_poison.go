package enginetest

import (
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// queuePoison checks a queue's poison queue (engine.PoisonQueuer), if it has one: a message
// moved there (enqueued on it, deleted from the work queue) is received from it alone, with
// its body and a fresh dequeue count, and deleted like any other. A queue without a poison
// queue has nothing to check.
func queuePoison(t *testing.T, q engine.WorkQueue) {
	p, ok := q.(engine.PoisonQueuer)
	if !ok || p.PoisonQueue() == nil {
		return
	}
	pq := p.PoisonQueue()
	ctx := ctxOf(t)
	body := []byte(`{"v":1,"run_id":"r","gen":1,"step":2}`)
	if err := q.Enqueue(ctx, body, 0); err != nil {
		t.Fatal(err)
	}
	msgs := receive(t, q, 1, time.Second)
	if len(msgs) != 1 {
		t.Fatalf("received %d messages, want 1", len(msgs))
	}
	if err := pq.Enqueue(ctx, msgs[0].Body, 0); err != nil {
		t.Fatalf("enqueue on the poison queue: %v", err)
	}
	if err := q.Delete(ctx, msgs[0]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past the work queue message's visibility
	if got := receive(t, q, 32, time.Second); len(got) != 0 {
		t.Fatalf("the work queue still holds %d messages", len(got))
	}
	msgs, err := pq.Receive(ctx, 32, time.Second)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != string(body) || msgs[0].DequeueCount != 1 {
		t.Fatalf("poison queue receive = %+v, %v; want the body once with dequeue count 1", msgs, err)
	}
	if err := pq.Delete(ctx, msgs[0]); err != nil {
		t.Fatalf("delete from the poison queue: %v", err)
	}
	if got, err := pq.Receive(ctx, 32, time.Second); err != nil || len(got) != 0 {
		t.Fatalf("poison queue after delete = %+v, %v", got, err)
	}
}
