package launch_test

import (
	"fmt"
	"testing"
)

// Under isolation, retention keeps FUNCGRAPH_MEMORY_MAX_RUNS finished runs per owner and
// counts a child run as its root owner's: alice's many finished families never purge bob's
// finished run or its finished child, which bob's parent still lists and bob still reads.
func TestTenants_Retention_PerOwner_KeepsAnothersChildRuns(t *testing.T) {
	const maxRuns, aliceRuns = 16, 40
	env := map[string]string{"FUNCGRAPH_MEMORY_MAX_RUNS": fmt.Sprint(maxRuns)}
	for _, app := range tenantApps(t, env, family(t)...) {
		t.Run(app.tr.Name, func(t *testing.T) {
			if code, body := app.start(t, "bob", "family", "bob-root", `{}`); code != 202 {
				t.Fatalf("bob's start: %d %.200s", code, body)
			}
			if run := app.settled(t, "bob-root"); !run.RuntimeStatus.Finished() || len(run.ChildInstanceIDs) != 1 {
				t.Fatalf("bob's run: %s, children %v", run.RuntimeStatus, run.ChildInstanceIDs)
			}
			parallel(aliceRuns, func(i int) {
				if code, body := app.start(t, "alice", "family", fmt.Sprint("alice-", i), `{}`); code != 202 {
					t.Errorf("alice's start %d: %d %.200s", i, code, body)
				}
			})
			for i := range aliceRuns {
				app.settled(t, fmt.Sprint("alice-", i))
			}
			if _, err := app.a.Engine.Sweep(t.Context()); err != nil {
				t.Fatal(err)
			}
			code, body := app.as(t, "bob", "GET", "/api/runs/bob-root", "")
			kids, _ := field(t, body, "child_instance_ids").([]any)
			if code != 200 || len(kids) != 1 {
				t.Fatalf("bob's run after alice's load and a sweep: %d %.300s", code, body)
			}
			kid, _ := kids[0].(string)
			if code, body := app.as(t, "bob", "GET", "/api/runs/"+kid, ""); code != 200 || field(t, body, "parent_instance_id") != "bob-root" {
				t.Fatalf("bob's child %s, which his run lists: %d %.300s", kid, code, body)
			}
			kept := 0
			for i := range aliceRuns {
				if code, _ := app.as(t, "alice", "GET", fmt.Sprint("/api/runs/alice-", i), ""); code == 200 {
					kept++
				}
			}
			if kept == aliceRuns || kept > maxRuns {
				t.Fatalf("alice keeps %d of her %d families, want retention to purge some, keeping at most %d runs", kept, aliceRuns, maxRuns)
			}
		})
	}
}
