package funchosttest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// extensions.queues listener settings, read and validated like QueuesOptions.
func TestParseHostConfig_QueueSettings(t *testing.T) {
	cfg, err := funchosttest.ParseHostConfig([]byte(`{"extensions":{"queues":{"batchSize":4,"newBatchThreshold":0,"visibilityTimeout":"00:00:30","maxPollingInterval":"00:00:00.2"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.Queues
	if q.Batch() != 4 || q.Threshold() != 0 || q.VisibilityTimeout != 30*time.Second || q.MaxPolling() != 200*time.Millisecond {
		t.Errorf("settings %+v: batch %d, threshold %d, max polling %v", q, q.Batch(), q.Threshold(), q.MaxPolling())
	}
	def, err := funchosttest.ParseHostConfig([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := def.Queues; d.Batch() != 16 || d.Threshold() < 8 || d.Threshold()%8 != 0 || d.VisibilityTimeout != 0 || d.MaxPolling() != time.Minute {
		t.Errorf("defaults: batch %d, threshold %d (want 8 × processors), visibility %v, max polling %v", d.Batch(), d.Threshold(), d.VisibilityTimeout, d.MaxPolling())
	}
	for _, bad := range []string{
		`{"extensions":{"queues":{"batchSize":33}}}`,
		`{"extensions":{"queues":{"batchSize":0}}}`,
		`{"extensions":{"queues":{"newBatchThreshold":-1}}}`,
		`{"extensions":{"queues":{"maxPollingInterval":"00:00:00.05"}}}`,
		`{"extensions":{"queues":{"visibilityTimeout":"soon"}}}`,
	} {
		if _, err := funchosttest.ParseHostConfig([]byte(bad)); err == nil {
			t.Errorf("ParseHostConfig(%s) succeeded, want an error", bad)
		}
	}
}

// Without the trigger's connection setting in Options.Env the in-memory queues serve the
// function, whatever the process environment holds.
func TestEmulator_QueueTrigger_NoConnectionUsesMemory(t *testing.T) {
	t.Setenv("AzureWebJobsStorage", "UseDevelopmentStorage=true")
	rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) { writeResult(w, nil) }}
	e := start(t, writeApp(t, "", map[string]string{"worker": queueFunc}), rec, funchosttest.Options{})
	e.EnqueueBase64("work-items", "mem")
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rec.count() != 1 || len(e.Queue("work-items")) != 0 {
		t.Errorf("invocations %d, queue %q; want 1 and empty", rec.count(), e.Queue("work-items"))
	}
}

// extensions.queues.visibilityTimeout is the back-off of a failed message (QueueProcessor's
// ReleaseMessageAsync): it is not delivered again before the timeout, and is after it.
func TestEmulator_QueueTrigger_FailedMessageBacksOffVisibilityTimeout(t *testing.T) {
	rec := failing()
	host := `{"customHandler":{"description":{"defaultExecutablePath":"x"}},"extensions":{"queues":{"visibilityTimeout":"00:00:01","maxDequeueCount":3}}}`
	e := start(t, writeApp(t, host, map[string]string{"worker": queueFunc}), rec, funchosttest.Options{})
	e.EnqueueBase64("work-items", "doomed")
	failedAt := time.Now()
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := rec.count(); n != 1 {
		t.Fatalf("%d invocations before the back-off, want 1", n)
	}
	for time.Since(failedAt) < 900*time.Millisecond {
		if err := e.DrainQueues(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := rec.count(); n != 1 {
			t.Fatalf("redelivered after %v, before visibilityTimeout (1 s)", time.Since(failedAt))
		}
		time.Sleep(50 * time.Millisecond)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rec.count() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d invocations 5 s later, want 3 (one per second)", rec.count())
		}
		if err := e.DrainQueues(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if since := time.Since(failedAt); since < 1900*time.Millisecond {
		t.Errorf("three attempts within %v, want two back-offs of 1 s", since)
	}
	if got := e.QueueContents("work-items-poison"); len(got) != 1 || got[0] != "doomed" {
		t.Errorf("poison queue %q, want the message after maxDequeueCount (3) attempts", got)
	}
}

// The repository's host.json gives failed work items a back-off the emulator reads: retried
// after 30 s, polled at least every 2 s, moved to <queue>-poison after 5 failures — a
// delivery budget of 5 × (30 s + 2 s) before the engine's repair pass takes over.
func TestParseHostConfig_RepositoryHostJSON_QueueBackoff(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "host.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := funchosttest.ParseHostConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if q := cfg.Queues; q.VisibilityTimeout != 30*time.Second || q.MaxPolling() != 2*time.Second || cfg.MaxDequeueCount != 5 {
		t.Errorf("visibilityTimeout %v, maxPollingInterval %v, maxDequeueCount %d; want 30s, 2s, 5", q.VisibilityTimeout, q.MaxPolling(), cfg.MaxDequeueCount)
	}
}
