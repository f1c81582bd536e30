package launch_test

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// Under isolation, one identity's waiting runs stop at its share of the budget, the index
// and due rows and partitions they make the store hold included: eve's starts are refused
// 507 for her share (not the total), what counts against the total only is the index's few
// shared partitions, and alice still starts runs and creates threads. Were a run's index rows
// to count against the total only (more than half of a small waiting run's bytes), eve would
// hold about twice her share of the total.
func TestTenants_OneIdentitysWaitingRuns_StopAtItsShare(t *testing.T) {
	env := map[string]string{"FUNCGRAPH_MEMORY_BUDGET": "4MiB"} // 1 MiB a share
	for _, app := range tenantApps(t, env) {
		t.Run(app.tr.Name, func(t *testing.T) {
			b := app.s.MemoryBudget
			const maxStarts = 2000 // a small waiting run holds more than 1 KiB
			var admitted, refusedShare, refusedTotal atomic.Int64
			parallel(maxStarts, func(i int) {
				if refusedShare.Load()+refusedTotal.Load() >= 8 {
					return
				}
				code, body := app.start(t, "eve", "support_agent", fmt.Sprint("eve-", i), `{"user_message":"refund"}`)
				switch {
				case code == 202:
					admitted.Add(1)
				case code == 507 && body == refusedBody(true):
					refusedShare.Add(1)
				case code == 507 && body == refusedBody(false):
					refusedTotal.Add(1)
				default:
					t.Errorf("eve's start %d: %d %.200s", i, code, body)
				}
			})
			if refusedShare.Load() == 0 || refusedTotal.Load() > 0 {
				t.Fatalf("eve: %d runs admitted, %d starts refused for her share and %d for the total; want her share to stop her",
					admitted.Load(), refusedShare.Load(), refusedTotal.Load())
			}
			eve, all, share := b.UsedBy("eve"), b.Used(), b.Limits().PerIdentity
			if eve > share || all-eve > 16<<10 {
				t.Fatalf("eve's %d runs hold %d bytes of her share of %d, and %d more count against the total only",
					admitted.Load(), eve, share, all-eve)
			}
			t.Logf("eve: %d runs admitted, %d bytes, %d bytes a run; %d bytes against the total only", admitted.Load(), eve, eve/admitted.Load(), all-eve)
			for i := range 3 {
				if code, body := app.start(t, "alice", "support_agent", fmt.Sprint("alice-", i), `{"user_message":"refund"}`); code != 202 {
					t.Fatalf("alice's start once eve is full: %d %.200s", code, body)
				}
				if code, body := app.as(t, "alice", "POST", "/api/threads", `{}`); code != 200 {
					t.Fatalf("alice's thread once eve is full: %d %.200s", code, body)
				}
			}
			if code, body := app.as(t, "alice", "GET", "/api/runs/alice-0", ""); code != 200 {
				t.Fatalf("alice reads her run: %d %.200s", code, body)
			}
		})
	}
}
