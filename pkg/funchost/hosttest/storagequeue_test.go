package hosttest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost/hosttest"
)

// extensions.queues listener settings, read and validated like QueuesOptions.
func TestParseHostConfig_QueueSettings(t *testing.T) {
	cfg, err := hosttest.ParseHostConfig([]byte(`{"extensions":{"queues":{"batchSize":4,"newBatchThreshold":0,"visibilityTimeout":"00:00:30","maxPollingInterval":"00:00:00.2"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.Queues
	if q.Batch() != 4 || q.Threshold() != 0 || q.VisibilityTimeout != 30*time.Second || q.MaxPolling() != 200*time.Millisecond {
		t.Errorf("settings %+v: batch %d, threshold %d, max polling %v", q, q.Batch(), q.Threshold(), q.MaxPolling())
	}
	def, err := hosttest.ParseHostConfig([]byte(`{}`))
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
		if _, err := hosttest.ParseHostConfig([]byte(bad)); err == nil {
			t.Errorf("ParseHostConfig(%s) succeeded, want an error", bad)
		}
	}
}

// Without the trigger's connection setting in Options.Env the in-memory queues serve the
// function, whatever the process environment holds.
func TestEmulator_QueueTrigger_NoConnectionUsesMemory(t *testing.T) {
	t.Setenv("AzureWebJobsStorage", "UseDevelopmentStorage=true")
	rec := &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) { writeResult(w, nil) }}
	e := start(t, writeApp(t, "", map[string]string{"worker": queueFunc}), rec, hosttest.Options{})
	e.EnqueueBase64("work-items", "mem")
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rec.count() != 1 || len(e.Queue("work-items")) != 0 {
		t.Errorf("invocations %d, queue %q; want 1 and empty", rec.count(), e.Queue("work-items"))
	}
}
