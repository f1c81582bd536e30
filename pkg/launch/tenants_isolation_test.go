package launch_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// bobsRequests checks, as bob, that what he stored before is still his (200, not 404) and that
// his new requests of every kind are served (not 507): a thread, a run and its event, a run
// on his thread. round names the new ids.
func bobsRequests(t *testing.T, app tenantApp, round string) {
	t.Helper()
	for _, path := range []string{"/api/threads/bob-thread", "/api/threads/bob-thread/state", "/api/runs/bob-run"} {
		if code, body := app.as(t, "bob", "GET", path, ""); code != 200 {
			t.Fatalf("after %s: bob's GET %s: %d %.200s", round, path, code, body)
		}
	}
	tid := "bob-thread-" + round
	if code, body := app.as(t, "bob", "POST", "/api/threads", `{"thread_id":"`+tid+`","metadata":{"note":"`+strings.Repeat("b", 8<<10)+`"}}`); code != 200 {
		t.Fatalf("after %s: bob's thread: %d %.200s", round, code, body)
	}
	if code, body := app.as(t, "bob", "POST", "/api/threads/"+tid+"/runs/wait", `{"assistant_id":"data_pipeline","input":{"source_url":"s"}}`); code != 200 {
		t.Fatalf("after %s: bob's run on his thread: %d %.200s", round, code, body)
	}
	id := "bob-run-" + round
	if code, body := app.start(t, "bob", "support_agent", id, `{"user_message":"refund `+strings.Repeat("b", 8<<10)+`"}`); code != 202 {
		t.Fatalf("after %s: bob's start: %d %.200s", round, code, body)
	}
	app.settled(t, id)
	if code, body := app.as(t, "bob", "POST", "/api/runs/"+id+"/events/approval", `{"approved":true,"reviewer":"bob"}`); code != 202 {
		t.Fatalf("after %s: bob's event: %d %.200s", round, code, body)
	}
	if run := app.finished(t, id); run.RuntimeStatus != "Completed" {
		t.Fatalf("after %s: bob's approved run is %s", round, run.RuntimeStatus)
	}
}

// untilRefused sends request(i) for i = 0, 1, ... until it is refused 507 for eve's share; any
// other answer than ok (or a refusal of the total) fails the test.
func untilRefused(t *testing.T, what string, ok int, request func(i int) (int, string)) {
	t.Helper()
	for i := range 200 {
		code, body := request(i)
		if code == 507 {
			if !strings.Contains(body, apierror.IdentityStorageFullMessage) {
				t.Fatalf("eve's %s %d: 507 %.200s, want her share named", what, i, body)
			}
			return
		}
		if code != ok {
			t.Fatalf("eve's %s %d: %d %.200s", what, i, code, body)
		}
	}
	t.Fatalf("eve's %s: 200 requests and no refusal", what)
}

// Under isolation, no sequence of one identity's heavy requests — threads, runs, events, runs
// on threads, background runs, families of child runs, fan-outs past her room — makes another
// identity's request answer 507, 404 for its own data, or time out, while that identity alone
// cannot exhaust the total (a share is a quarter of it). Then, with the total full of several
// identities' waiting runs, cancel and purge by a run's owner and by the master key succeed.
func TestTenants_OneIdentitysLoad_NeverRefusesAnother_CancelAndPurgeWithTheTotalFull(t *testing.T) {
	env := map[string]string{"FUNCGRAPH_MEMORY_BUDGET": "4MiB"} // 1 MiB a share
	for _, app := range tenantApps(t, env, append(family(t), spillFan(t))...) {
		t.Run(app.tr.Name, func(t *testing.T) {
			if code, body := app.as(t, "bob", "POST", "/api/threads", `{"thread_id":"bob-thread"}`); code != 200 {
				t.Fatalf("bob's thread: %d %.200s", code, body)
			}
			if code, body := app.as(t, "bob", "POST", "/api/threads/bob-thread/runs/wait", `{"assistant_id":"data_pipeline","input":{"source_url":"s"}}`); code != 200 {
				t.Fatalf("bob's run on his thread: %d %.200s", code, body)
			}
			if code, body := app.start(t, "bob", "support_agent", "bob-run", `{"user_message":"refund"}`); code != 202 {
				t.Fatalf("bob's start: %d %.200s", code, body)
			}
			bobsRequests(t, app, "nothing")
			b := app.s.MemoryBudget
			others := func() int64 { return b.Used() - b.UsedBy("eve") - b.UsedBy("bob") }
			othersBefore := others()
			pad := strings.Repeat("e", 100<<10)

			untilRefused(t, "thread", 200, func(i int) (int, string) {
				return app.as(t, "eve", "POST", "/api/threads", fmt.Sprintf(`{"thread_id":"eve-thread-%d","metadata":{"pad":"%s"}}`, i, pad))
			})
			bobsRequests(t, app, "eve's-threads")
			for i := range 30 { // purge-free room for her runs: her threads go
				if code, body := app.as(t, "eve", "DELETE", fmt.Sprint("/api/threads/eve-thread-", i), ""); code != 204 && code != 404 {
					t.Fatalf("eve's thread delete %d: %d %.200s", i, code, body)
				}
			}

			var eveRuns []string
			untilRefused(t, "start", 202, func(i int) (int, string) {
				id := fmt.Sprint("eve-run-", i)
				code, body := app.start(t, "eve", "support_agent", id, `{"user_message":"refund `+pad+`"}`)
				if code == 202 {
					eveRuns = append(eveRuns, id)
				}
				return code, body
			})
			bobsRequests(t, app, "eve's-runs")
			for _, id := range eveRuns { // her events land on her waiting runs, or are refused
				app.settled(t, id)
				code, body := app.as(t, "eve", "POST", "/api/runs/"+id+"/events/approval", `{"approved":false,"pad":"`+pad+`"}`)
				if code != 202 && code != 409 && !(code == 507 && strings.Contains(body, apierror.IdentityStorageFullMessage)) {
					t.Fatalf("eve's event to %s: %d %.200s", id, code, body)
				}
			}
			bobsRequests(t, app, "eve's-events")
			for _, id := range eveRuns { // make room: cancel and purge her runs
				if code, body := app.as(t, "eve", "POST", "/api/runs/"+id+"/cancel", ""); code != 202 && code != 409 {
					t.Fatalf("eve's cancel of %s: %d %.200s", id, code, body)
				}
				if code, body := app.as(t, "eve", "DELETE", "/api/runs/"+id, ""); code != 200 {
					t.Fatalf("eve's purge of %s: %d %.200s", id, code, body)
				}
			}

			for i := range 5 { // families, and fan-outs whose results pass her room
				for _, start := range [][2]string{{"family", `{}`}, {"spill_fan", `{"sizes":[524288,524288]}`}} {
					code, body := app.start(t, "eve", start[0], fmt.Sprintf("eve-%s-%d", start[0], i), start[1])
					if code != 202 && !(code == 507 && strings.Contains(body, apierror.IdentityStorageFullMessage)) {
						t.Fatalf("eve's %s %d: %d %.200s", start[0], i, code, body)
					}
					if code == 202 {
						app.settled(t, fmt.Sprintf("eve-%s-%d", start[0], i))
					}
				}
			}
			bobsRequests(t, app, "eve's-families-and-fan-outs")
			for i := range 5 { // make room again
				for _, g := range []string{"family", "spill_fan"} {
					if code, body := app.as(t, "eve", "DELETE", fmt.Sprintf("/api/runs/eve-%s-%d", g, i), ""); code != 200 && code != 404 {
						t.Fatalf("eve's purge of her %s %d: %d %.200s", g, i, code, body)
					}
				}
			}

			if code, body := app.as(t, "eve", "POST", "/api/threads", `{"thread_id":"eve-chat"}`); code != 200 {
				t.Fatalf("eve's chat thread: %d %.200s", code, body)
			}
			untilRefused(t, "run on her thread", 200, func(i int) (int, string) {
				return app.as(t, "eve", "POST", "/api/threads/eve-chat/runs/wait", `{"assistant_id":"data_pipeline","input":{"source_url":"`+pad+`"}}`)
			})
			for i := range 20 { // background runs on fresh threads of hers
				tid := fmt.Sprint("eve-bg-", i)
				code, body := app.as(t, "eve", "POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"data_pipeline","if_not_exists":"create","input":{"source_url":"s"}}`)
				if code != 200 && !(code == 507 && strings.Contains(body, apierror.IdentityStorageFullMessage)) {
					t.Fatalf("eve's background run %d: %d %.200s", i, code, body)
				}
			}
			bobsRequests(t, app, "eve's-platform-runs")
			// What eve's requests made the stores hold is hers, within her share: the
			// bytes of no identity grew only by the index's shared partitions.
			if eve, grown := b.UsedBy("eve"), others()-othersBefore; eve > b.Limits().PerIdentity || grown > 16<<10 {
				t.Fatalf("eve holds %d bytes of her share of %d, and %d more bytes of no identity", eve, b.Limits().PerIdentity, grown)
			}
			t.Logf("eve holds %d bytes of her share of %d, and %d more bytes of no identity", b.UsedBy("eve"), b.Limits().PerIdentity, others()-othersBefore)

			waiting := app.fillTotal(t, "id0", "id1", "id2", "id3", "id4", "id5")
			app.checkCancelAndPurge(t, waiting, "id0")
		})
	}
}
