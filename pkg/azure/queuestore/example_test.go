package queuestore_test

import (
	"context"
	"os"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
)

// A worker receives a work item, keeps it hidden while the step runs, then deletes it.
func ExampleNew() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	qc, err := clients.EnsureQueue(ctx, "funcgraph-work")
	if err != nil {
		return
	}
	q := queuestore.New(qc)
	_ = q.Enqueue(ctx, []byte(`{"run_id":"run-1"}`), 0)
	msgs, err := q.Receive(ctx, 1, 30*time.Second)
	if err != nil || len(msgs) == 0 {
		return
	}
	msg, err := q.Extend(ctx, msgs[0], 30*time.Second) // the step needs longer
	if err != nil {
		return // gone or redelivered: someone else owns it now
	}
	_ = q.Delete(ctx, msg)
}

// Open creates the queue when it is missing and returns the work queue on it: what launch
// does for the durable engine at startup.
func ExampleOpen() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	q, err := queuestore.Open(ctx, clients, "funcgraph-work")
	if err != nil {
		return
	}
	_ = q.Enqueue(ctx, []byte(`{"run_id":"run-1"}`), time.Minute) // delivered in a minute
}

// A Queue from Open reads the poison queue the Functions host writes ("<queue>-poison"), as
// the engine's repair pass does.
func ExampleQueue_PoisonQueue() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.SettingsFrom("", os.Getenv), nil)
	if err != nil {
		return
	}
	q, err := queuestore.Open(ctx, clients, "funcgraph-work")
	if err != nil {
		return
	}
	msgs, err := q.PoisonQueue().Receive(ctx, 32, time.Minute)
	if err != nil {
		return
	}
	for _, m := range msgs {
		_ = q.Enqueue(ctx, m.Body, 0) // what the repair pass does when the run still needs it
		_ = q.PoisonQueue().Delete(ctx, m)
	}
}
