package funchosttest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// messageTTL is the default time to live of a queue message.
const messageTTL = 7 * 24 * time.Hour

// processingVisibility hides a dequeued message while its invocation runs.
const processingVisibility = 10 * time.Minute

type queueMessage struct {
	id, popReceipt, text string
	inserted, expires    time.Time
	visible              time.Time
	dequeueCount         int64
}

// queueService is the in-memory queue storage. mu guards queues.
type queueService struct {
	mu     sync.Mutex
	queues map[string][]*queueMessage
}

func newQueueService() *queueService { return &queueService{queues: map[string][]*queueMessage{}} }

func normalizeQueue(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

func (s *queueService) enqueue(queue, text string) {
	now := time.Now().UTC()
	m := &queueMessage{id: newGUID(), text: text, inserted: now, expires: now.Add(messageTTL), visible: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := normalizeQueue(queue)
	s.queues[q] = append(s.queues[q], m)
}

// dequeue takes the first visible message: its dequeue count grows, it gets a new pop receipt
// and stays invisible while it is processed. It returns a copy.
func (s *queueService) dequeue(queue string) (queueMessage, bool) {
	now := time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.queues[normalizeQueue(queue)] {
		if !m.visible.After(now) {
			m.dequeueCount++
			m.popReceipt = newGUID()
			m.visible = now.Add(processingVisibility)
			return *m, true
		}
	}
	return queueMessage{}, false
}

func (s *queueService) remove(queue, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := normalizeQueue(queue)
	msgs := s.queues[q]
	for i, m := range msgs {
		if m.id == id {
			s.queues[q] = append(msgs[:i:i], msgs[i+1:]...)
			return
		}
	}
}

// release makes a message visible again after visibility (host.json's
// queues.visibilityTimeout; default zero, at once), as the listener's ReleaseMessageAsync does.
func (s *queueService) release(queue, id string, visibility time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.queues[normalizeQueue(queue)] {
		if m.id == id {
			m.visible = time.Now().UTC().Add(visibility)
		}
	}
}

func (s *queueService) texts(queue string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.queues[normalizeQueue(queue)] {
		out = append(out, m.text)
	}
	return out
}

// Enqueue adds a message with exactly this text, as a producer would write it: with the
// default messageEncoding (base64) the trigger expects base64 text, so encode it yourself or
// use EnqueueBase64.
func (e *Emulator) Enqueue(queue string, text string) { e.queues.enqueue(queue, text) }

// EnqueueBase64 adds a message whose text is the base64 encoding of content.
func (e *Emulator) EnqueueBase64(queue string, content string) {
	e.queues.enqueue(queue, base64.StdEncoding.EncodeToString([]byte(content)))
}

// Queue returns the text of every message in queue (visible or not), oldest first, as stored.
// Poison messages are in "<queue>-poison".
func (e *Emulator) Queue(queue string) []string { return e.queues.texts(queue) }

// QueueContents returns the messages of queue decoded as the trigger would decode them
// (base64 unless messageEncoding is none); text that is not base64 is returned as it is.
func (e *Emulator) QueueContents(queue string) []string {
	texts := e.queues.texts(queue)
	for i, t := range texts {
		if b, ok := e.decodeFromQueue(t); ok {
			texts[i] = string(b)
		}
	}
	return texts
}

func (e *Emulator) decodeFromQueue(text string) ([]byte, bool) {
	if e.cfg.MessageEncoding == "none" {
		return []byte(text), true
	}
	b, err := base64.StdEncoding.DecodeString(text)
	return b, err == nil
}

// DrainQueues delivers queue messages to their queue-triggered functions until no function's
// queue holds a visible message: successful invocations delete their message, failed ones
// leave it for a retry once host.json's queues.visibilityTimeout has passed (a later
// DrainQueues or the background poller delivers it then), and a message that failed
// maxDequeueCount times (or cannot be decoded) moves to "<queue>-poison". Functions that keep
// feeding their own queues keep it looping, so bound it with ctx. It returns ctx's error if
// ctx ends first.
func (e *Emulator) DrainQueues(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		progressed, err := e.drainOnce(ctx)
		if err != nil {
			return err
		}
		if !progressed {
			return nil
		}
	}
}

// drainOnce offers one message to every queue-triggered function, in name order.
func (e *Emulator) drainOnce(ctx context.Context) (bool, error) {
	progressed := false
	for _, f := range e.functions {
		if _, bad := e.failed[f.Name]; bad || f.Disabled || !strings.EqualFold(f.Trigger.Type, "queueTrigger") {
			continue
		}
		if _, real := e.storageConnection(f.Trigger); real {
			continue // a storage queue listener serves it
		}
		queue := normalizeQueue(f.Trigger.QueueName)
		m, ok := e.queues.dequeue(queue)
		if !ok {
			continue
		}
		progressed = true
		if err := e.deliver(ctx, f, queue, m); err != nil {
			return progressed, err
		}
	}
	return progressed, nil
}

func (e *Emulator) deliver(ctx context.Context, f *function, queue string, m queueMessage) error {
	max := int64(e.cfg.MaxDequeueCount)
	if m.dequeueCount > max {
		e.poison(queue, m)
		return nil
	}
	content, ok := e.decodeFromQueue(m.text)
	if !ok {
		e.logf("funchosttest: %s: message %s is not valid base64; moving it to %s-poison", f.Name, m.id, queue)
		e.poison(queue, m)
		return nil
	}
	p := e.queuePayload(f, content, m)
	res, err := e.invoke(ctx, f, p)
	if err == nil {
		err = e.applyOutputs(f, res)
	}
	if err == nil {
		e.queues.remove(queue, m.id)
		return nil
	}
	if ctx.Err() != nil {
		e.queues.release(queue, m.id, 0)
		return ctx.Err()
	}
	e.logf("funchosttest: %s: message %s attempt %d failed: %v", f.Name, m.id, m.dequeueCount, err)
	if m.dequeueCount >= max {
		e.poison(queue, m)
		return nil
	}
	e.queues.release(queue, m.id, e.cfg.Queues.VisibilityTimeout)
	return nil
}

func (e *Emulator) poison(queue string, m queueMessage) {
	e.queues.remove(queue, m.id)
	e.queues.enqueue(queue+"-poison", m.text)
}

// stringTrigger encodes a string trigger value: JSON-encoded twice as the host does, or once
// with SingleEncodedStrings.
func (e *Emulator) stringTrigger(s string) any {
	if e.opts.SingleEncodedStrings {
		return s
	}
	inner, _ := json.Marshal(s)
	return string(inner)
}

// queuePayload builds a queue-trigger invocation as the host does
// (ScriptInvocationContextExtensions.GetHttpScriptInvocationContextValue): the message text
// double-encoded in Data; in Metadata every string value double-encoded (JObject.FromObject
// fails on a primitive and the host falls back to JsonConvert.SerializeObject), DequeueCount
// a string for the same reason, the times as DateTimeOffset values. With
// SingleEncodedStrings the payload has the shape the docs show instead (plain strings, a
// numeric DequeueCount).
func (e *Emulator) queuePayload(f *function, content []byte, m queueMessage) payload {
	md := map[string]any{
		"DequeueCount":    strconv.FormatInt(m.dequeueCount, 10),
		"Id":              e.stringTrigger(m.id),
		"PopReceipt":      e.stringTrigger(m.popReceipt),
		"InsertionTime":   queueTime(m.inserted),
		"ExpirationTime":  queueTime(m.expires),
		"NextVisibleTime": queueTime(m.visible),
		"sys":             sysMetadata(f.Name),
	}
	if e.opts.SingleEncodedStrings {
		md["DequeueCount"] = m.dequeueCount
	}
	return payload{Data: map[string]any{f.Trigger.Name: e.stringTrigger(string(content))}, Metadata: md}
}

// queueTime formats a message time as Json.NET writes the host's DateTimeOffset (re-parsed
// from its string form, so whole seconds).
func queueTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05+00:00") }

// dotnetTime formats a time as .NET serialises a DateTimeOffset.
func dotnetTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.0000000+00:00") }

func (e *Emulator) pollQueues(ctx context.Context, every time.Duration) {
	defer e.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := e.DrainQueues(ctx); err != nil && !errors.Is(err, context.Canceled) {
				e.logf("funchosttest: queue poller: %v", err)
			}
		}
	}
}
