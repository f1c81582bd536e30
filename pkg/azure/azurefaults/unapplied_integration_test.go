//go:build integration

package azurefaults_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// Issue #32 on Azure Tables: a run cancelled with events it never applied records one
// event_not_applied row per event, before run_terminated, in the cancel's batch — also when
// that batch's reply is lost and the cancel is settled by reading its rows back.
func TestIntegrationCancel_EventsLeft_RecordedNotApplied(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{})
	id := r.start(t, "support_agent", "", supportInput) // Pending: its events stay in the inbox
	for range 2 {
		if err := r.e.RaiseEvent(t.Context(), id, "approval", json.RawMessage(approval)); err != nil {
			t.Fatal(err)
		}
	}
	lost := r.proxies.Table.Add(faultproxy.Rule{Name: "cancel", Match: batchWith("run_terminated", "event_not_applied"), Times: 1, Fault: faultproxy.LoseReply})
	if err := r.e.CancelRun(t.Context(), id, "stop"); err != nil {
		t.Fatalf("CancelRun: %v", err)
	}
	fired(t, lost)
	r.assertRun(t, id, engine.StatusTerminated)
	rows := strings.Join(r.history(t, id), " ")
	if want := "event_not_applied:classify_request event_not_applied:classify_request run_terminated:classify_request"; !strings.HasSuffix(rows, want) {
		t.Fatalf("history %s, want it to end with %s", rows, want)
	}
	page, err := r.e.History(t.Context(), id, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for _, ev := range page.Events {
		if ev.Type == engine.HistoryEventNotApplied {
			seqs = append(seqs, string(ev.Data))
		}
	}
	if want := `{"event_name":"approval","inbox_seq":1} {"event_name":"approval","inbox_seq":2}`; strings.Join(seqs, " ") != want {
		t.Fatalf("event_not_applied rows %v, want %s", seqs, want)
	}
	r.assertNoOrphans(t, id)
}
