package launch_test

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Under isolation, a fan-out whose branch results are too big for the room its owner has left
// (the payload store refuses the spill) ends Failed with the branch's failure instead of
// retrying its work item for ever; then, with the total full of several identities' waiting
// runs, the owner's cancel and the master key's cancel and purge succeed while another start
// is refused 507.
func TestTenants_FanOutSpillRefused_FailsTheRun_CancelAndPurgeWithTheTotalFull(t *testing.T) {
	env := map[string]string{"FUNCGRAPH_MEMORY_BUDGET": "4MiB"} // 1 MiB a share
	for _, app := range tenantApps(t, env, spillFan(t)) {
		t.Run(app.tr.Name, func(t *testing.T) {
			if code, body := app.start(t, "alice", "spill_fan", "alice-fan", `{"sizes":[65536,524288,524288,524288]}`); code != 202 {
				t.Fatalf("alice's fan-out: %d %.200s", code, body)
			}
			run := app.settled(t, "alice-fan")
			if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(string(run.Output), "branch result cannot be stored") {
				t.Fatalf("alice's fan-out is %s with output %.300s, want failed by its branch's result", run.RuntimeStatus, run.Output)
			}
			code, body := app.as(t, "alice", "GET", "/api/runs/alice-fan", "")
			if code != 200 || field(t, body, "runtime_status") != "Failed" {
				t.Fatalf("alice reads her fan-out: %d %.300s", code, body)
			}
			if b := app.s.MemoryBudget; b.UsedBy("alice") > b.Limits().PerIdentity {
				t.Fatalf("alice holds %d bytes, past her share of %d", b.UsedBy("alice"), b.Limits().PerIdentity)
			}
			waiting := app.fillTotal(t, "id0", "id1", "id2", "id3", "id4", "id5")
			app.checkCancelAndPurge(t, waiting, "id2")
		})
	}
}
