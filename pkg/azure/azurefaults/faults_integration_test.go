//go:build integration

package azurefaults_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

const (
	pipelineInput = `{"source_url":"https://example.com/data"}`
	supportInput  = `{"user_message":"refund"}`
	approval      = `{"approved":true,"reviewer":"r"}`
	pipelineRows  = "run_started:extract node_completed:extract route_resolved:extract node_completed:transform route_resolved:transform " +
		"node_completed:load route_resolved:load run_completed:load"
)

// assertPipeline checks a data_pipeline run that completed with each visit once.
func (r *rig) assertPipeline(t *testing.T, id string) {
	t.Helper()
	r.assertRun(t, id, engine.StatusCompleted)
	if got := strings.Join(r.history(t, id), " "); got != pipelineRows {
		t.Fatalf("history %s\nwant    %s", got, pipelineRows)
	}
}

// Each test loses the reply of one kind of write: the proxy lets Azurite apply it and cuts
// the connection; the SDK retries and its retry meets the write (409, 412 or 404).

func TestIntegrationLostReply_Start(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	lost := r.proxies.Table.Add(faultproxy.Rule{Name: "start", Match: batchWith("run_started"), Fault: faultproxy.LoseReply, Times: 1})
	id := r.start(t, "data_pipeline", "lost-start", pipelineInput) // 202 for its own run, not 409
	fired(t, lost)
	r.drive(t)
	r.assertPipeline(t, id)
	r.assertNoOrphans(t, id)
}

func TestIntegrationLostReply_StepCommit(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	// The second node's commit (transform), then the one that completes the run.
	visit := r.proxies.Table.Add(faultproxy.Rule{Name: "visit", Match: batchWith("node_completed"), Skip: 1, Times: 1, Fault: faultproxy.LoseReply})
	done := r.proxies.Table.Add(faultproxy.Rule{Name: "completion", Match: batchWith("run_completed"), Times: 1, Fault: faultproxy.LoseReply})
	id := r.start(t, "data_pipeline", "", pipelineInput)
	r.drive(t) // the run must not stall Running with nothing queued
	fired(t, visit, done)
	r.assertPipeline(t, id)
	r.assertNoOrphans(t, id)
}

func TestIntegrationLostReply_Event(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	id := r.start(t, "support_agent", "", supportInput)
	r.drive(t)
	lost := r.proxies.Table.Add(faultproxy.Rule{Name: "event", Match: batchWith("event_received"), Times: 1, Fault: faultproxy.LoseReply})
	applied := r.proxies.Table.Add(faultproxy.Rule{Name: "apply", Match: batchWith("event_applied"), Times: 1, Fault: faultproxy.LoseReply})
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval)); err != nil { // no Idempotency-Key
		t.Fatalf("RaiseEvent: %v", err)
	}
	r.drive(t)
	fired(t, lost, applied)
	r.assertRun(t, id, engine.StatusCompleted)
	if n := count(r.history(t, id), engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored for one POST", n)
	}
	r.assertNoOrphans(t, id)
}

func TestIntegrationLostReply_Cancel(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	id := r.start(t, "support_agent", "", supportInput)
	r.drive(t)
	lost := r.proxies.Table.Add(faultproxy.Rule{Name: "cancel", Match: batchWith("run_terminated"), Times: 1, Fault: faultproxy.LoseReply})
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatalf("CancelRun: %v (a cancel that succeeded must not answer 'not running')", err)
	}
	fired(t, lost)
	r.assertRun(t, id, engine.StatusTerminated)
	if n := count(r.history(t, id), engine.HistoryRunTerminated); n != 1 {
		t.Fatalf("%d run_terminated rows", n)
	}
	r.assertNoOrphans(t, id) // the index update ran
}

func TestIntegrationLostReply_Purge(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{InlineLimit: 1024}) // its input and state spill to blobs
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/`+strings.Repeat("p", 4000)+`"}`)
	r.drive(t)
	r.assertRun(t, id, engine.StatusCompleted)
	rows := r.proxies.Table.Add(faultproxy.Rule{Name: "rows", Match: batchWith("DELETE ", ",RowKey='h"), Times: 1, Fault: faultproxy.LoseReply})
	head := r.proxies.Table.Add(faultproxy.Rule{Name: "head", Match: headDelete(), Times: 1, Fault: faultproxy.LoseReply})
	blob := r.proxies.Blob.Add(faultproxy.Rule{Name: "payload", Match: faultproxy.BlobDelete(), Times: 1, Fault: faultproxy.LoseReply})
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatalf("PurgeRun: %v", err)
	}
	fired(t, rows, head, blob)
	if _, err := r.e.GetRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("purged run still readable: %v", err)
	}
	if page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: id}); err != nil || len(page.Entities) != 0 {
		t.Fatalf("%d rows left after the purge (%v)", len(page.Entities), err)
	}
	r.assertNoOrphans(t, id)
}

func TestIntegrationLostReply_IndexUpdate(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	lost := r.proxies.Table.Add(faultproxy.Rule{Name: "index", Match: indexWrite(), Fault: faultproxy.LoseReply, Probability: 0.5})
	done := r.start(t, "data_pipeline", "", pipelineInput)
	cancelled := r.start(t, "support_agent", "", supportInput)
	r.drive(t)
	if err := r.e.CancelRun(t.Context(), cancelled, "stop"); err != nil {
		t.Fatal(err)
	}
	fired(t, lost)
	r.assertPipeline(t, done)
	r.assertRun(t, cancelled, engine.StatusTerminated)
	lost.Remove()
	for _, id := range []string{done, cancelled} {
		r.assertNoOrphans(t, id)
	}
}

func TestIntegrationLostReply_EnqueueAndDelete(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	enq := r.proxies.Queue.Add(faultproxy.Rule{Name: "enqueue", Match: faultproxy.QueueEnqueue(), Times: 2, Fault: faultproxy.LoseReply})
	del := r.proxies.Queue.Add(faultproxy.Rule{Name: "delete", Match: faultproxy.QueueDelete(), Times: 2, Fault: faultproxy.LoseReply})
	ids := []string{r.start(t, "data_pipeline", "", pipelineInput), r.start(t, "data_pipeline", "", pipelineInput)}
	r.drive(t) // the duplicated items are dropped as stale; the deleted ones do not come back
	fired(t, enq, del)
	for _, id := range ids {
		r.assertPipeline(t, id)
		r.assertNoOrphans(t, id)
	}
}

func TestIntegrationLostReply_PayloadPut(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{InlineLimit: 1024})
	lost := r.proxies.Blob.Add(faultproxy.Rule{Name: "payload", Match: faultproxy.BlobPut(), Times: 2, Fault: faultproxy.LoseReply})
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/`+strings.Repeat("p", 4000)+`"}`)
	r.drive(t)
	fired(t, lost)
	run := r.assertRun(t, id, engine.StatusCompleted)
	if !strings.Contains(string(run.Input.InitialState), strings.Repeat("p", 4000)) {
		t.Fatal("the spilled input did not come back")
	}
	r.assertNoOrphans(t, id)
}

// 503 ServerBusy bursts on every service: the SDK's retries absorb them.
func TestIntegrationBusyBursts_RunsComplete(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{InlineLimit: 1024})
	rules := []*faultproxy.Handle{
		r.proxies.Table.Add(faultproxy.Rule{Name: "table", Match: faultproxy.TableBatch(), Skip: 3, Times: 2, Fault: faultproxy.Busy}),
		r.proxies.Queue.Add(faultproxy.Rule{Name: "queue", Match: faultproxy.Write(), Times: 2, Fault: faultproxy.Busy}),
		r.proxies.Blob.Add(faultproxy.Rule{Name: "blob", Match: faultproxy.Write(), Times: 2, Fault: faultproxy.Busy}),
	}
	id := r.start(t, "data_pipeline", "", `{"source_url":"https://example.com/`+strings.Repeat("p", 4000)+`"}`)
	sid := r.start(t, "support_agent", "", supportInput)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), sid, "approval", json.RawMessage(approval)); err != nil {
		t.Fatal(err)
	}
	r.drive(t)
	fired(t, rules...)
	r.assertRun(t, id, engine.StatusCompleted)
	r.assertRun(t, sid, engine.StatusCompleted)
	if n := count(r.history(t, sid), engine.HistoryEventReceived); n != 1 {
		t.Fatalf("%d events stored", n)
	}
	for _, id := range []string{id, sid} {
		r.assertNoOrphans(t, id)
	}
}

// Cancel and purge on Azure tables, without faults: the head merge, run_terminated row,
// index updates and the purge's deletes as the table service applies them.
func TestIntegrationCancelThenPurge_OnAzureTables(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	id := r.start(t, "support_agent", "", supportInput)
	r.drive(t)
	if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(`{"approved": false}`)); err != nil {
		t.Fatal(err)
	}
	var notFinished *engine.RunNotFinishedError
	if err := r.e.PurgeRun(t.Context(), id); !errors.As(err, &notFinished) {
		t.Fatalf("purge of a running run: %v", err)
	}
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatal(err)
	}
	var finished *engine.RunFinishedError
	if err := r.e.CancelRun(t.Context(), id, "again"); !errors.As(err, &finished) {
		t.Fatalf("second cancel: %v", err)
	}
	run := r.assertRun(t, id, engine.StatusTerminated)
	if string(run.Output) != `"stop"` {
		t.Fatalf("output %s", run.Output)
	}
	if got := r.history(t, id); got[len(got)-1] != engine.HistoryRunTerminated+":classify_request" {
		t.Fatalf("history %v", got)
	}
	r.drive(t) // nothing left to run
	r.assertNoOrphans(t, id)
	list, err := r.e.ListRuns(t.Context(), engine.RunQuery{Status: engine.StatusTerminated})
	if err != nil || len(list.Runs) != 1 || list.Runs[0].InstanceID != id {
		t.Fatalf("terminated runs %v (%v)", list.Runs, err)
	}
	if err := r.e.PurgeRun(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if page, err := r.store.Query(t.Context(), engine.Query{PartitionKey: id}); err != nil || len(page.Entities) != 0 {
		t.Fatalf("%d rows left after the purge (%v)", len(page.Entities), err)
	}
	r.assertNoOrphans(t, id)
	if err := r.e.PurgeRun(t.Context(), id); !errors.Is(err, engine.ErrRunNotFound) {
		t.Fatalf("second purge: %v", err)
	}
}
