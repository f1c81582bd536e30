//go:build integration

package queuestore_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// newQueue creates a fresh queue on Azurite and deletes it when the test ends.
func newQueue(t testing.TB) *azqueue.QueueClient {
	t.Helper()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := clients.EnsureQueue(t.Context(), azuritetest.UniqueName("work-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = q.Delete(context.Background(), nil) })
	return q
}

func TestIntegrationQueue_Conformance(t *testing.T) {
	t.Parallel()
	enginetest.RunWorkQueueTests(t, func(t *testing.T) engine.WorkQueue { return queuestore.New(newQueue(t)) })
}

// Open's queues have their poison queue: the suite moves a message there and back.
func TestIntegrationQueue_ConformanceWithPoisonQueue(t *testing.T) {
	t.Parallel()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	enginetest.RunWorkQueueTests(t, func(t *testing.T) engine.WorkQueue {
		name := azuritetest.UniqueName("work-")
		q, err := queuestore.Open(t.Context(), clients, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, n := range []string{name, name + queuestore.PoisonSuffix} {
				_, _ = clients.Queues.NewQueueClient(n).Delete(context.Background(), nil)
			}
		})
		if q.PoisonQueue() == nil {
			t.Fatal("Open returned a queue without its poison queue")
		}
		return q
	})
}

func receiveOne(t *testing.T, q *queuestore.Queue, vis time.Duration) engine.Message {
	t.Helper()
	msgs, err := q.Receive(t.Context(), 1, vis)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Receive = %d messages, %v", len(msgs), err)
	}
	return msgs[0]
}

func TestIntegrationQueue_Extend_KeepsHiddenAndRenewsReceipt(t *testing.T) {
	t.Parallel()
	q := queuestore.New(newQueue(t))
	ctx := t.Context()
	body := []byte(`{"run_id":"r","step":7}`)
	if err := q.Enqueue(ctx, body, 0); err != nil {
		t.Fatal(err)
	}
	first := receiveOne(t, q, time.Second)
	ext, err := q.Extend(ctx, first, 4*time.Second)
	if err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if ext.PopReceipt == first.PopReceipt || ext.ID != first.ID || string(ext.Body) != string(body) {
		t.Fatalf("Extend returned %+v (first %+v)", ext, first)
	}
	time.Sleep(1500 * time.Millisecond) // past the first visibility timeout
	if msgs, err := q.Receive(ctx, 32, time.Second); err != nil || len(msgs) != 0 {
		t.Fatalf("extended message visible again: %+v, %v", msgs, err)
	}
	if err := q.Delete(ctx, first); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("delete with the receipt before Extend: err = %v, want ErrNotFound", err)
	}
	if _, err := q.Extend(ctx, first, time.Second); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("extend with a stale receipt: err = %v, want ErrNotFound", err)
	}
	// Extend to 0: visible at once, body unchanged, dequeue count 2.
	ext, err = q.Extend(ctx, ext, 0)
	if err != nil {
		t.Fatal(err)
	}
	again := receiveOne(t, q, 30*time.Second)
	if again.ID != first.ID || string(again.Body) != string(body) || again.DequeueCount != 2 {
		t.Fatalf("redelivery after Extend = %+v", again)
	}
	if err := q.Delete(ctx, again); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Extend(ctx, again, time.Second); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("extend of a deleted message: err = %v, want ErrNotFound", err)
	}
}

// The Functions queue trigger reads base64 text; messages never expire.
func TestIntegrationQueue_WireFormat_Base64NoExpiry(t *testing.T) {
	t.Parallel()
	raw := newQueue(t)
	q := queuestore.New(raw)
	body := []byte{0, 1, 2, 0xff, '{', '"'}
	if err := q.Enqueue(t.Context(), body, 0); err != nil {
		t.Fatal(err)
	}
	peek, err := raw.PeekMessages(t.Context(), nil)
	if err != nil || len(peek.Messages) != 1 {
		t.Fatalf("peek: %v", err)
	}
	m := peek.Messages[0]
	if *m.MessageText != base64.StdEncoding.EncodeToString(body) {
		t.Errorf("message text %q is not the base64 of the body", *m.MessageText)
	}
	if m.ExpirationTime == nil || m.ExpirationTime.Before(time.Now().Add(365*24*time.Hour)) {
		t.Errorf("message expires at %v, want never", m.ExpirationTime)
	}
	// A delay above Azure's seven days is capped rather than refused.
	if err := q.Enqueue(t.Context(), []byte("x"), 8*24*time.Hour); err != nil {
		t.Errorf("delay of 8 days: %v", err)
	}
}
