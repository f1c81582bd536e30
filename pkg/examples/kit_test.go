package examples

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// These tests drive the example graphs on the real engine through the durabletest kit: no
// dispatcher, no sleeps, timers moved with a fake clock.

func historyTypes(h []durabletest.HistoryEvent) []string {
	out := make([]string, len(h))
	for i, e := range h {
		out[i] = e.Type
	}
	return out
}

func TestKit_DataPipeline_Completes(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, MustDataPipeline(), durabletest.Options{})
	run := kit.Start("p1", PipelineState{SourceURL: "https://example.com/data"})
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s, output %s", run.RuntimeStatus, run.Output)
	}
	final := kit.Final("p1")
	if final.LoadResult == nil || *final.LoadResult != "Loaded 3 records to https://example.com/data/output" || final.RecordCount != 3 {
		t.Fatalf("final state %+v", final)
	}
	if got := kit.Visits("p1"); !slices.Equal(got, []string{"extract", "transform", "load"}) {
		t.Fatalf("visits %v", got)
	}
}

func TestKit_DataPipeline_RetriesATransientFailure(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, MustDataPipeline(), durabletest.Options{
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}},
		Faults: map[string]int{"transform": 2},
	})
	run := kit.Start("p2", PipelineState{SourceURL: "s"})
	if run.RuntimeStatus != durabletest.StatusRunning {
		t.Fatalf("after the first failure: %s, want Running (backing off)", run.RuntimeStatus)
	}
	kit.Advance(999 * time.Millisecond)
	if got := kit.Visits("p2"); !slices.Equal(got, []string{"extract"}) {
		t.Fatalf("retried before the back-off was over: visits %v", got)
	}
	kit.Advance(time.Millisecond) // second attempt: fails again, next back-off 2 s
	if run := kit.Run("p2"); run.RuntimeStatus != durabletest.StatusRunning {
		t.Fatalf("after the second failure: %s", run.RuntimeStatus)
	}
	kit.Advance(2 * time.Second)
	if run := kit.Run("p2"); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("after the third attempt: %s %s", run.RuntimeStatus, run.Output)
	}
	retries := 0
	for _, typ := range historyTypes(kit.History("p2")) {
		if typ == durabletest.HistoryNodeRetryScheduled {
			retries++
		}
	}
	if retries != 2 {
		t.Fatalf("%d retries in history %v, want 2", retries, historyTypes(kit.History("p2")))
	}
}

func TestKit_DataPipeline_RetriesExhaustedFailTheRun(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, MustDataPipeline(), durabletest.Options{
		Policy: durable.GraphPolicy{Retry: durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Minute}},
		Faults: map[string]int{"extract": 5},
	})
	kit.Start("p3", PipelineState{SourceURL: "s"})
	kit.Advance(time.Minute)
	run := kit.Run("p3")
	if run.RuntimeStatus != durabletest.StatusFailed || !strings.Contains(run.FailureMessage(), durabletest.ErrInjected.Error()) {
		t.Fatalf("status %s, failure %q", run.RuntimeStatus, run.FailureMessage())
	}
}

func TestKit_ContentClassifier_RoutesToTheCategory(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, mustContentClassifier(), durabletest.Options{})
	kit.StartJSON("c1", `{"text":"How do I reset my password?"}`)
	final := kit.Final("c1")
	if final.Category == nil || *final.Category != "question" || final.Response == nil || *final.Response != questionResponse {
		t.Fatalf("final %+v", final)
	}
	if got := kit.Visits("c1"); !slices.Equal(got, []string{"classify", "handle_question", "summarize"}) {
		t.Fatalf("visits %v", got)
	}
}

func TestKit_SupportAgent_WaitsForApproval(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, MustSupportAgent(), durabletest.Options{})
	run := kit.Start("s1", SupportState{UserMessage: "I want a refund"})
	if ev, ok := run.WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("waiting for %q (%v), status %s", ev, ok, run.RuntimeStatus)
	}
	run = kit.Send("s1", "approval", map[string]any{"approved": true, "reviewer": "ana"})
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s", run.RuntimeStatus)
	}
	if final := kit.Final("s1"); *final.FinalResponse != refundReply+" Reviewer: ana." {
		t.Fatalf("final response %q", *final.FinalResponse)
	}
}

func TestKit_SupportAgent_WaitTimesOut(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, MustSupportAgent(), durabletest.Options{
		Policy: durable.GraphPolicy{WaitTimeout: time.Hour, WaitTimeoutNode: "draft_reply"},
	})
	kit.Start("s2", SupportState{UserMessage: "legal question"})
	kit.Advance(59 * time.Minute)
	if ev, ok := kit.Run("s2").WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("stopped waiting before the timeout: %q %v", ev, ok)
	}
	kit.Advance(time.Minute)
	run := kit.Run("s2")
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("after the timeout: %s %s", run.RuntimeStatus, run.Output)
	}
	if final := kit.Final("s2"); *final.FinalResponse != manualReviewReply {
		t.Fatalf("final response %q", *final.FinalResponse)
	}
	if !slices.Contains(historyTypes(kit.History("s2")), durabletest.HistoryWaitTimedOut) {
		t.Fatalf("no wait_timed_out row: %v", historyTypes(kit.History("s2")))
	}
}

func TestKit_SupportAgent_WaitTimeoutWithoutNodeFails(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, MustSupportAgent(), durabletest.Options{Policy: durable.GraphPolicy{WaitTimeout: time.Minute}})
	kit.Start("s3", SupportState{UserMessage: "refund"})
	kit.Advance(time.Minute)
	if run := kit.Run("s3"); run.RuntimeStatus != durabletest.StatusFailed || !strings.Contains(run.FailureMessage(), "timed out") {
		t.Fatalf("status %s, failure %q", run.RuntimeStatus, run.FailureMessage())
	}
}
