package enginetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// RunWorkQueueTests runs the engine.WorkQueue conformance suite. newWorkQueue returns a
// fresh, empty queue for each subtest. Visibility timeouts are whole seconds (the Azure
// granularity), so the suite sleeps a few seconds in total.
func RunWorkQueueTests(t *testing.T, newWorkQueue func(t *testing.T) engine.WorkQueue) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, q engine.WorkQueue)
	}{
		{"Receive_Empty_NoMessages", queueEmpty},
		{"Receive_HidesForVisibility_ThenRedelivers", queueVisibility},
		{"Delete_StaleReceipt_NotFound", queueStaleDelete},
		{"Enqueue_Delay_HidesUntilDue", queueDelay},
		{"Limits_Rejected", queueLimits},
		{"ConcurrentReceivers_EachMessageOnce", queueConcurrent},
		{"Extend_KeepsHidden_NewReceipt", queueExtend},
		{"Extend_StaleReceiptOrDeleted_NotFound", queueExtendStale},
		{"PoisonQueue_SeparateWithFreshCount", queuePoison},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newWorkQueue(t))
		})
	}
}

func receive(t *testing.T, q engine.WorkQueue, max int, vis time.Duration) []engine.Message {
	t.Helper()
	msgs, err := q.Receive(ctxOf(t), max, vis)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return msgs
}

func queueEmpty(t *testing.T, q engine.WorkQueue) {
	if msgs := receive(t, q, 32, time.Second); len(msgs) != 0 {
		t.Fatalf("empty queue returned %d messages", len(msgs))
	}
}

func queueVisibility(t *testing.T, q engine.WorkQueue) {
	body := []byte(`{"run_id":"r1","step":3}`)
	if err := q.Enqueue(ctxOf(t), body, 0); err != nil {
		t.Fatal(err)
	}
	first := receive(t, q, 1, time.Second)
	if len(first) != 1 || string(first[0].Body) != string(body) || first[0].DequeueCount != 1 {
		t.Fatalf("first receive = %+v", first)
	}
	if again := receive(t, q, 32, time.Second); len(again) != 0 {
		t.Fatalf("message visible during its visibility timeout: %+v", again)
	}
	time.Sleep(1500 * time.Millisecond)
	second := receive(t, q, 1, 30*time.Second)
	if len(second) != 1 || second[0].DequeueCount != 2 || second[0].ID != first[0].ID {
		t.Fatalf("redelivery = %+v, want the same message with dequeue count 2", second)
	}
	if err := q.Delete(ctxOf(t), second[0]); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	if left := receive(t, q, 32, time.Second); len(left) != 0 {
		t.Fatalf("deleted message came back: %+v", left)
	}
}

func queueStaleDelete(t *testing.T, q engine.WorkQueue) {
	first, second := receivedTwice(t, q)
	if err := q.Delete(ctxOf(t), first); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("delete with stale receipt: err = %v, want ErrNotFound", err)
	}
	if err := q.Delete(ctxOf(t), second); err != nil {
		t.Fatalf("delete with current receipt: %v", err)
	}
	if err := q.Delete(ctxOf(t), second); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("second delete: err = %v, want ErrNotFound", err)
	}
}

func queueDelay(t *testing.T, q engine.WorkQueue) {
	if err := q.Enqueue(ctxOf(t), []byte("later"), time.Second); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctxOf(t), []byte("now"), 0); err != nil {
		t.Fatal(err)
	}
	msgs := receive(t, q, 32, 30*time.Second)
	if len(msgs) != 1 || string(msgs[0].Body) != "now" {
		t.Fatalf("before the delay: %+v, want only \"now\"", msgs)
	}
	time.Sleep(1500 * time.Millisecond)
	msgs = receive(t, q, 32, 30*time.Second)
	if len(msgs) != 1 || string(msgs[0].Body) != "later" {
		t.Fatalf("after the delay: %+v, want \"later\"", msgs)
	}
}

func queueLimits(t *testing.T, q engine.WorkQueue) {
	if err := q.Enqueue(ctxOf(t), make([]byte, engine.MaxMessageBytes+1), 0); !errors.Is(err, engine.ErrTooLarge) {
		t.Errorf("oversized message: err = %v, want ErrTooLarge", err)
	}
	if err := q.Enqueue(ctxOf(t), make([]byte, engine.MaxMessageBytes), 0); err != nil {
		t.Errorf("message of MaxMessageBytes: %v", err)
	}
	if _, err := q.Receive(ctxOf(t), engine.MaxReceive+1, time.Second); err == nil {
		t.Error("Receive of 33 messages accepted")
	}
	if _, err := q.Receive(ctxOf(t), 0, time.Second); err == nil {
		t.Error("Receive of 0 messages accepted")
	}
}

func queueConcurrent(t *testing.T, q engine.WorkQueue) {
	const n = 60
	for i := range n {
		if err := q.Enqueue(ctxOf(t), fmt.Appendf(nil, "m%02d", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				msgs, err := q.Receive(ctxOf(t), 8, 30*time.Second)
				if err != nil {
					t.Errorf("Receive: %v", err)
					return
				}
				if len(msgs) == 0 {
					return
				}
				for _, m := range msgs {
					mu.Lock()
					seen[string(m.Body)]++
					mu.Unlock()
					if err := q.Delete(ctxOf(t), m); err != nil {
						t.Errorf("Delete: %v", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("received %d distinct messages, want %d", len(seen), n)
	}
	for body, c := range seen {
		if c != 1 {
			t.Errorf("message %s received %d times", body, c)
		}
	}
}

func queueExtend(t *testing.T, q engine.WorkQueue) {
	if err := q.Enqueue(ctxOf(t), []byte("slow"), 0); err != nil {
		t.Fatal(err)
	}
	first := receive(t, q, 1, time.Second)
	if len(first) != 1 {
		t.Fatalf("received %d messages", len(first))
	}
	ext, err := q.Extend(ctxOf(t), first[0], 3*time.Second)
	if err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if ext.ID != first[0].ID || ext.PopReceipt == "" || ext.PopReceipt == first[0].PopReceipt || ext.DequeueCount != first[0].DequeueCount {
		t.Fatalf("Extend returned %+v for %+v: want the same message, count unchanged, a new receipt", ext, first[0])
	}
	time.Sleep(1500 * time.Millisecond) // past the first visibility timeout, within the extension
	if again := receive(t, q, 32, time.Second); len(again) != 0 {
		t.Fatalf("extended message was redelivered: %+v", again)
	}
	if err := q.Delete(ctxOf(t), first[0]); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("delete with the receipt from before Extend: err = %v, want ErrNotFound", err)
	}
	if err := q.Delete(ctxOf(t), ext); err != nil {
		t.Fatalf("delete with the receipt from Extend: %v", err)
	}
}

func queueExtendStale(t *testing.T, q engine.WorkQueue) {
	first, second := receivedTwice(t, q)
	if _, err := q.Extend(ctxOf(t), first, 30*time.Second); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Extend with a stale receipt: err = %v, want ErrNotFound", err)
	}
	if err := q.Delete(ctxOf(t), second); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Extend(ctxOf(t), second, 30*time.Second); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Extend of a deleted message: err = %v, want ErrNotFound", err)
	}
}

// receivedTwice enqueues one message, receives it with a 1 s visibility, lets that expire and
// receives it again: first carries the now stale pop receipt, second the current one.
func receivedTwice(t *testing.T, q engine.WorkQueue) (first, second engine.Message) {
	t.Helper()
	if err := q.Enqueue(ctxOf(t), []byte("m"), 0); err != nil {
		t.Fatal(err)
	}
	got := receive(t, q, 1, time.Second)
	if len(got) != 1 {
		t.Fatalf("received %d messages", len(got))
	}
	time.Sleep(1500 * time.Millisecond)
	again := receive(t, q, 1, 30*time.Second)
	if len(again) != 1 {
		t.Fatal("no redelivery")
	}
	return got[0], again[0]
}
