package funchosttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/connstr"
)

// DefaultListenerVisibility is how long the host's queue listener hides a received message
// (QueueListener: 10 minutes); it renews that every half of it while the invocation runs.
const DefaultListenerVisibility = 10 * time.Minute

// minVisibilityRenewal is the shortest interval between visibility renewals after failed
// renewals (QueueListener.MinimumVisibilityRenewalInterval).
const minVisibilityRenewal = time.Minute

// storageConnection resolves a storage binding's `connection` (default AzureWebJobsStorage)
// to a connection string, as the host does: the setting "AzureWebJobs<connection>" first, then
// "<connection>". ok is false when neither is set, and the emulator's in-memory queues serve
// the binding instead (where the host would fail to index the function: a convenience for
// tests that need no storage). Only Options.Env and local.settings.json count here, not the
// process environment, so a developer's own AzureWebJobsStorage cannot turn a test's
// in-memory queues into storage queues.
func (e *Emulator) storageConnection(b funchost.Binding) (string, bool) {
	name := strings.TrimSpace(b.Connection)
	if name == "" {
		name = funchost.DefaultConnection
	}
	for _, key := range []string{"AzureWebJobs" + name, name} {
		if v, _ := lookupSetting(e.connections, key); strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// storageQueues caches azqueue clients by connection string and queue name.
type storageQueues struct {
	mu      sync.Mutex
	clients map[[2]string]*azqueue.QueueClient
	created map[[2]string]bool
	wake    map[string][]chan struct{} // listeners by queue name
}

func newStorageQueues() *storageQueues {
	return &storageQueues{clients: map[[2]string]*azqueue.QueueClient{}, created: map[[2]string]bool{}, wake: map[string][]chan struct{}{}}
}

func (s *storageQueues) client(conn, queue string) (*azqueue.QueueClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := [2]string{conn, queue}
	if c, ok := s.clients[key]; ok {
		return c, nil
	}
	// The connection string is read as the app reads it, UseDevelopmentStorage=true (which
	// azqueue does not parse itself) included.
	keys, err := connstr.Parse(conn)
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", queue, err)
	}
	conn, _ = connstr.Expand(conn, keys)
	svc, err := azqueue.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		return nil, fmt.Errorf("queue %s: create queue client: %w", queue, err)
	}
	c := svc.NewQueueClient(queue)
	s.clients[key] = c
	return c, nil
}

// ensure creates the queue unless this emulator already did (the output binding and the
// poison path create their queue when missing).
func (s *storageQueues) ensure(ctx context.Context, conn, queue string, c *azqueue.QueueClient) error {
	s.mu.Lock()
	done := s.created[[2]string{conn, queue}]
	s.mu.Unlock()
	if done {
		return nil
	}
	if _, err := c.Create(ctx, nil); err != nil && !queueerror.HasCode(err, queueerror.QueueAlreadyExists) {
		return fmt.Errorf("create queue %s: %w", queue, err)
	}
	s.mu.Lock()
	s.created[[2]string{conn, queue}] = true
	s.mu.Unlock()
	return nil
}

// register returns a channel that is signalled when the emulator adds a message to queue
// (the host's shared queue watcher cuts the listener's back-off short).
func (s *storageQueues) register(queue string) chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wake[queue] = append(s.wake[queue], ch)
	return ch
}

func (s *storageQueues) notify(queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.wake[queue] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// sendToStorage writes one queue output message to the storage queue of conn, creating the
// queue if needed, as the queue output binding does.
func (e *Emulator) sendToStorage(ctx context.Context, conn, queue, text string) error {
	queue = normalizeQueue(queue)
	c, err := e.storage.client(conn, queue)
	if err != nil {
		return err
	}
	if err := e.storage.ensure(ctx, conn, queue, c); err != nil {
		return err
	}
	if _, err := c.EnqueueMessage(ctx, text, nil); err != nil {
		return fmt.Errorf("enqueue to %s: %w", queue, err)
	}
	e.storage.notify(queue)
	return nil
}

// enqueueOutput stores one queue output message: in the storage queue when the binding's
// connection is configured, otherwise in the in-memory queue.
func (e *Emulator) enqueueOutput(b funchost.Binding, text string) error {
	queue := b.QueueName
	conn, ok := e.storageConnection(b)
	if !ok {
		e.queues.enqueue(queue, text)
		return nil
	}
	ctx, cancel := context.WithTimeout(e.bg, 30*time.Second)
	defer cancel()
	return e.sendToStorage(ctx, conn, queue, text)
}

// startListeners starts a storage queue listener for every enabled queue-triggered function
// whose connection is configured.
func (e *Emulator) startListeners(ctx context.Context) error {
	for _, f := range e.functions {
		if _, bad := e.failed[f.Name]; bad || f.Disabled || !strings.EqualFold(f.Trigger.Type, "queueTrigger") {
			continue
		}
		conn, ok := e.storageConnection(f.Trigger)
		if !ok {
			continue
		}
		queue := normalizeQueue(f.Trigger.QueueName)
		l := &listener{e: e, f: f, conn: conn, name: queue, wake: e.storage.register(queue)}
		var err error
		if l.queue, err = e.storage.client(conn, queue); err != nil {
			return fmt.Errorf("listen %s: %w", f.Name, err)
		}
		if l.poison, err = e.storage.client(conn, queue+"-poison"); err != nil {
			return fmt.Errorf("listen %s: %w", f.Name, err)
		}
		e.wg.Add(1)
		go l.run(ctx)
	}
	return nil
}

// VisibilityRenewals returns how many times storage queue listeners renewed the visibility of
// a message whose invocation was still running.
func (e *Emulator) VisibilityRenewals() int { return int(e.renewals.Load()) }

// listenerVisibility is the visibility timeout of received messages.
func (e *Emulator) listenerVisibility() time.Duration {
	if e.opts.ListenerVisibility > 0 {
		return e.opts.ListenerVisibility
	}
	return DefaultListenerVisibility
}

// seconds converts d to whole seconds for the queue API (rounding up, at least min).
func seconds(d time.Duration, min int32) *int32 {
	s := int32((d + time.Second - 1) / time.Second)
	if s < min {
		s = min
	}
	return &s
}

// Errors the emulator logs and otherwise ignores, as the host's listener does.
func ignorable(err error) bool {
	return errors.Is(err, context.Canceled) || queueerror.HasCode(err, queueerror.PopReceiptMismatch,
		queueerror.MessageNotFound, queueerror.QueueNotFound)
}
