package inspector_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHistoryJS_FoldsUpdates runs the timeline's withStates (web/history.js) under node: a
// graph with reducers records what each step changed ("update"), and the state the timeline
// shows after each row is the whole state, as the engine's fold (engine.FoldState) rebuilds
// it; a row with the whole state replaces it. Skipped without node.
func TestHistoryJS_FoldsUpdates(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	src, err := os.ReadFile("web/history.js")
	if err != nil {
		t.Fatal(err)
	}
	const script = `
const vm = require("vm"); const ctx = {}; vm.createContext(ctx);
vm.runInContext(require("fs").readFileSync(0, "utf8") + ";this.withStates = withStates;", ctx);
const rows = [
  {type: "run_started", data: {initial_state: {m: [1], a: 1, b: 2}}},
  {type: "node_completed", data: {update: {m: {keep: 1, add: [2, 3]}, a: {set: 5}, b: {removed: true}}}},
  {type: "route_resolved", data: {action: "next", next_node: "x"}},
  {type: "branches_joined", data: {join_node: "j", count: 2, update: {m: {keep: 2, add: [9, 10]}}}},
  {type: "event_applied", data: {event_name: "e", update: {c: {set: "new"}}}},
  {type: "node_completed", data: {update: {}}},
  {type: "node_completed", data: {state: {x: 1}}},
];
for (const r of ctx.withStates(rows)) console.log(r.event.type, JSON.stringify(r.after));
`
	cmd := exec.CommandContext(t.Context(), node, "-e", script)
	cmd.Stdin = strings.NewReader(string(src))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	want := `run_started {"m":[1],"a":1,"b":2}
node_completed {"m":[1,2,3],"a":5}
route_resolved {"m":[1,2,3],"a":5}
branches_joined {"m":[1,2,9,10],"a":5}
event_applied {"m":[1,2,9,10],"a":5,"c":"new"}
node_completed {"m":[1,2,9,10],"a":5,"c":"new"}
node_completed {"x":1}
`
	if string(out) != want {
		t.Fatalf("states after each row:\n%s\nwant\n%s", out, want)
	}
}
