//go:build integration

package funchosttest_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// storageQueue creates a fresh queue on Azurite and returns its client; the queue and its
// -poison and -next companions are deleted with the test.
func storageQueue(t *testing.T, cs, name string) *azqueue.QueueClient {
	t.Helper()
	c, err := azqueue.NewQueueClientFromConnectionString(cs, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{name, name + "-poison", name + "-next", name + "-done"} {
			if q, err := azqueue.NewQueueClientFromConnectionString(cs, n, nil); err == nil {
				_, _ = q.Delete(t.Context(), nil)
			}
		}
	})
	return c
}

func companion(t *testing.T, cs, name string) *azqueue.QueueClient {
	t.Helper()
	c, err := azqueue.NewQueueClientFromConnectionString(cs, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// messageCount is the queue's approximate message count (hidden messages included); a
// missing queue counts 0.
func messageCount(t *testing.T, c *azqueue.QueueClient) int {
	t.Helper()
	p, err := c.GetProperties(t.Context(), nil)
	if err != nil || p.ApproximateMessagesCount == nil {
		return 0
	}
	return int(*p.ApproximateMessagesCount)
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// texts dequeues every visible message of c and returns their texts.
func texts(t *testing.T, c *azqueue.QueueClient) []string {
	t.Helper()
	resp, err := c.DequeueMessages(t.Context(), &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(32)), VisibilityTimeout: ptr(int32(60))})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range resp.Messages {
		out = append(out, *m.MessageText)
	}
	slices.Sort(out)
	return out
}

func ptr[T any](v T) *T { return &v }

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func queueFuncFor(queue string, out string) string {
	bindings := []map[string]any{{"name": "msg", "type": "queueTrigger", "direction": "in", "queueName": queue, "connection": "AzureWebJobsStorage"}}
	if out != "" {
		bindings = append(bindings, map[string]any{"name": "out", "type": "queue", "direction": "out", "queueName": out, "connection": "AzureWebJobsStorage"})
	}
	data, _ := json.Marshal(map[string]any{"bindings": bindings})
	return string(data)
}

const fastPolling = `{"customHandler":{"description":{"defaultExecutablePath":"handler"}},"extensions":{"queues":{"maxPollingInterval":"00:00:00.5"%s}}}`

// On a storage queue: the payload as the host sends it (message text and
// every string Metadata value double-encoded, DequeueCount a string, the storage message's
// own Id), the queue output written to the storage queue in base64, the message deleted.
func TestEmulatorIntegration_StorageQueue_PayloadOutputDelete(t *testing.T) {
	cs := azuritetest.ConnectionString(t)
	name := azuritetest.UniqueName("emu")
	q := storageQueue(t, cs, name)
	sent, err := q.EnqueueMessage(t.Context(), b64(`hello "world"`), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) {
		writeResult(w, map[string]any{"out": map[string]any{"k": 1}})
	}}
	root := writeApp(t, "", map[string]string{"worker": queueFuncFor(name, name+"-next")})
	e := start(t, root, rec, funchosttest.Options{Env: map[string]string{"AzureWebJobsStorage": cs}})
	next := companion(t, cs, name+"-next")
	waitFor(t, "the message to be handled and deleted", func() bool {
		return rec.count() == 1 && messageCount(t, q) == 0 && messageCount(t, next) == 1
	})
	p := rec.last(t).Payload
	if got := p["Data"].(map[string]any)["msg"]; got != `"hello \"world\""` {
		t.Errorf("Data.msg = %q, want the double-encoded text", got)
	}
	md := p["Metadata"].(map[string]any)
	checkQueueMetadata(t, md, "1")
	if id, _ := json.Marshal(*sent.Messages[0].MessageID); md["Id"] != string(id) {
		t.Errorf("Metadata.Id = %v, want %s", md["Id"], id)
	}
	if got := texts(t, next); len(got) != 1 || got[0] != b64(`{"k":1}`) {
		t.Errorf("%s-next holds %q, want the base64 of {\"k\":1}", name, got)
	}
	if e.Queue(name) != nil || e.Queue(name+"-next") != nil {
		t.Error("the in-memory queues were used for a function with a storage connection")
	}
}

// QueueProcessor's counting: a failing message is invoked maxDequeueCount times, then moved
// to <queue>-poison with its original text; a message already dequeued more often than that
// is poisoned without an invocation; text that is not base64 is poisoned at once.
func TestEmulatorIntegration_StorageQueue_RetriesThenPoison(t *testing.T) {
	cs := azuritetest.ConnectionString(t)
	name := azuritetest.UniqueName("emu")
	q := storageQueue(t, cs, name)
	// Received twice elsewhere, and made visible again each time: dequeue count 2.
	if _, err := q.EnqueueMessage(t.Context(), b64("tried"), nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		got, err := q.DequeueMessage(t.Context(), nil)
		if err != nil || len(got.Messages) != 1 {
			t.Fatalf("pre-dequeue %d: %v", i, err)
		}
		m := got.Messages[0]
		if _, err := q.UpdateMessage(t.Context(), *m.MessageID, *m.PopReceipt, *m.MessageText, &azqueue.UpdateMessageOptions{VisibilityTimeout: ptr(int32(0))}); err != nil {
			t.Fatal(err)
		}
	}
	for _, text := range []string{b64("doomed"), "not base64!"} {
		if _, err := q.EnqueueMessage(t.Context(), text, nil); err != nil {
			t.Fatal(err)
		}
	}
	rec := failing()
	root := writeApp(t, fmt.Sprintf(fastPolling, `,"maxDequeueCount":2`), map[string]string{"worker": queueFuncFor(name, "")})
	start(t, root, rec, funchosttest.Options{Env: map[string]string{"AzureWebJobsStorage": cs}})
	poison := companion(t, cs, name+"-poison")
	waitFor(t, "three poison messages", func() bool { return messageCount(t, poison) == 3 && messageCount(t, q) == 0 })
	if want := []string{b64("doomed"), b64("tried"), "not base64!"}; !slices.Equal(texts(t, poison), want) {
		t.Errorf("poison texts differ, want %q", want)
	}
	rec.mu.Lock()
	calls := slices.Clone(rec.calls)
	rec.mu.Unlock()
	var counts []any
	for _, inv := range calls {
		if inv.Payload["Data"].(map[string]any)["msg"] != `"doomed"` {
			t.Errorf("invoked with %v; only the doomed message should be", inv.Payload["Data"])
		}
		counts = append(counts, inv.Payload["Metadata"].(map[string]any)["DequeueCount"])
	}
	if !slices.Equal(counts, []any{"1", "2"}) {
		t.Errorf("DequeueCounts %v, want [1 2] (two attempts, then poison)", counts)
	}
}

// On a storage queue a failed message is released with host.json's visibilityTimeout (2 s
// here, QueueProcessor.ReleaseMessageAsync): each retry comes at least that long after the
// failure before it, then the message moves to <queue>-poison at maxDequeueCount.
func TestEmulatorIntegration_StorageQueue_FailedMessageBacksOff(t *testing.T) {
	cs := azuritetest.ConnectionString(t)
	name := azuritetest.UniqueName("emu")
	q := storageQueue(t, cs, name)
	if _, err := q.EnqueueMessage(t.Context(), b64("doomed"), nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var at []time.Time
	rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
	}}
	root := writeApp(t, fmt.Sprintf(fastPolling, `,"maxDequeueCount":3,"visibilityTimeout":"00:00:02"`), map[string]string{"worker": queueFuncFor(name, "")})
	start(t, root, rec, funchosttest.Options{Env: map[string]string{"AzureWebJobsStorage": cs}})
	poison := companion(t, cs, name+"-poison")
	waitFor(t, "the message in the poison queue", func() bool { return messageCount(t, poison) == 1 && messageCount(t, q) == 0 })
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 3 {
		t.Fatalf("%d attempts, want 3", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 1900*time.Millisecond {
			t.Errorf("attempt %d came %v after the failure before it, want at least visibilityTimeout (2 s)", i+1, gap)
		}
	}
}

// A long invocation keeps its message hidden: the listener renews the visibility every half
// of its visibility timeout (2 s here) and deletes with the latest pop receipt.
func TestEmulatorIntegration_StorageQueue_RenewsVisibility(t *testing.T) {
	cs := azuritetest.ConnectionString(t)
	name := azuritetest.UniqueName("emu")
	q := storageQueue(t, cs, name)
	if _, err := q.EnqueueMessage(t.Context(), b64("long"), nil); err != nil {
		t.Fatal(err)
	}
	ready := make(chan *funchosttest.Emulator, 1)
	var stolen atomic.Int64
	stolen.Store(-1)
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request, _ invocation) {
		e := <-ready
		ready <- e
		// Past the first 2 s of visibility (bounded, so a listener that never renews fails below).
		for deadline := time.Now().Add(8 * time.Second); e.VisibilityRenewals() < 2 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		got, err := q.DequeueMessages(r.Context(), &azqueue.DequeueMessagesOptions{NumberOfMessages: ptr(int32(32))})
		if err == nil {
			stolen.Store(int64(len(got.Messages)))
		}
		writeResult(w, nil)
	}}
	root := writeApp(t, fmt.Sprintf(fastPolling, ""), map[string]string{"worker": queueFuncFor(name, "")})
	ready <- start(t, root, rec, funchosttest.Options{Env: map[string]string{"AzureWebJobsStorage": cs}, ListenerVisibility: 2 * time.Second})
	waitFor(t, "the message to be deleted", func() bool { return rec.count() == 1 && messageCount(t, q) == 0 })
	time.Sleep(2500 * time.Millisecond) // a message that was not deleted would be visible again
	if n := stolen.Load(); n != 0 {
		t.Errorf("a competing receive got %d messages during the invocation, want 0 (hidden by renewal)", n)
	}
	if rec.count() != 1 || messageCount(t, q) != 0 {
		t.Errorf("invocations %d, queue %d; want one invocation and the message deleted", rec.count(), messageCount(t, q))
	}
}

// functionTimeout on a queue invocation: the handler process is killed and restarted, the
// message is not deleted but released, and its next delivery (DequeueCount 2) succeeds.
func TestEmulatorIntegration_StorageQueue_FunctionTimeoutReleases(t *testing.T) {
	cs := azuritetest.ConnectionString(t)
	name := azuritetest.UniqueName("emu")
	q := storageQueue(t, cs, name)
	if _, err := q.EnqueueMessage(t.Context(), b64("job"), nil); err != nil {
		t.Fatal(err)
	}
	fn := fmt.Sprintf(`{"bindings":[{"name":"msg","type":"queueTrigger","direction":"in","queueName":%q},{"name":"done","type":"queue","direction":"out","queueName":%q}]}`, name, name+"-done")
	host := `{"customHandler":{"description":{"defaultExecutablePath":"handler"}},"functionTimeout":"00:00:02","extensions":{"queues":{"maxPollingInterval":"00:00:00.5"}}}`
	root := timeoutApp(t, host, map[string]string{"work": fn})
	e, err := funchosttest.Start(t.Context(), funchosttest.Options{AppRoot: root, Logf: t.Logf,
		Env: map[string]string{"HOSTTEST_HELPER": "timeouts", "AzureWebJobsStorage": cs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	done := companion(t, cs, name+"-done")
	waitFor(t, "the second delivery to succeed", func() bool { return messageCount(t, done) == 1 && messageCount(t, q) == 0 })
	if got := texts(t, done); len(got) != 1 || got[0] != b64(`{"count":"2"}`) {
		t.Errorf("%s-done holds %q, want the base64 of {\"count\":\"2\"}", name, got)
	}
	if e.Restarts() != 1 || messageCount(t, companion(t, cs, name+"-poison")) != 0 {
		t.Errorf("Restarts() = %d, poison %d; want 1 and 0", e.Restarts(), messageCount(t, companion(t, cs, name+"-poison")))
	}
}
