package platform_test

import (
	"strings"
	"testing"
)

// TestDurableAssistant_Stream_BranchEventAtItsCommit: a fan-out branch's emitted event comes
// when the branch commits, while another branch of the fan-out is held (before the join); the
// branches' updates come at the join.
func TestDurableAssistant_Stream_BranchEventAtItsCommit(t *testing.T) {
	g := &gates{}
	trs := liveApp(t, g)
	tr := trs[0] // standalone: the host sends the body at the end
	gate := "fanout"
	releaseNow := release(g, gate)
	defer releaseNow()
	r := open(t, tr, "POST", "/api/threads/"+newLiveThread(t, tr)+"/runs/stream",
		`{"assistant_id":"live_fanout","input":{"gate":"`+gate+`","items":["fast","slow"]},"stream_mode":["custom","updates"]}`)
	before := r.until(t, "the fast branch's event", isEvent("custom", `"fast"`))
	if !releaseNow() {
		t.Fatalf("the fast branch's event came only once the slow branch was let go: %v", before)
	}
	frames := append(before, r.rest()...)
	var custom, updates []string
	for _, f := range frames {
		switch f.event {
		case "custom":
			custom = append(custom, f.data)
		case "updates":
			updates = append(updates, f.data)
		}
	}
	if strings.Join(custom, "|") != `{"name": "searched", "data": {"item": "fast"}}|{"name": "searched", "data": {"item": "slow"}}` {
		t.Errorf("custom frames %q: want each branch's event once, fast first", custom)
	}
	if len(updates) != 4 || !strings.Contains(updates[1], `{"search": {"searched": ["fast"]}}`) || !strings.Contains(updates[2], `{"search": {"searched": ["slow"]}}`) {
		t.Errorf("updates %q: want plan, each branch in slot order, done", updates)
	}
}
