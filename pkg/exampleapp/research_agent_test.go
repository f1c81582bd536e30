package exampleapp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
)

// research_agent over HTTP: started through the runs API, followed through its feed until it
// waits for approval, approved, followed to the end. The same checks run through both
// transports here and under the Functions host emulator on Azurite
// (research_agent_integration_test.go).

// caller sends one request to the app with the function key and returns status and body.
type caller func(method, path, body string) (int, []byte)

// feedItem is one item of GET /api/runs/{id}/feed.
type feedItem struct {
	Seq  int64           `json:"seq"`
	Type string          `json:"type"`
	Name string          `json:"name"`
	Node string          `json:"node"`
	Data json.RawMessage `json:"data"`
}

// researchFollower follows one run's feed.
type researchFollower struct {
	t     *testing.T
	call  caller
	id    string
	after int64
	items []feedItem // every item read so far
}

// until reads the feed until an item of type typ arrives (true), or the run finished without
// one (false); it fails the test past within.
func (f *researchFollower) until(typ string, within time.Duration) bool {
	f.t.Helper()
	deadline := time.Now().Add(within)
	for {
		code, body := f.call("GET", fmt.Sprintf("/api/runs/%s/feed?after=%d&wait=2", f.id, f.after), "")
		var page struct {
			Status    string     `json:"runtime_status"`
			Items     []feedItem `json:"items"`
			NextAfter int64      `json:"next_after"`
		}
		if err := json.Unmarshal(body, &page); code != http.StatusOK || err != nil {
			f.t.Fatalf("feed of %s after %d: %d %s", f.id, f.after, code, body)
		}
		if page.NextAfter < f.after {
			f.t.Fatalf("feed of %s went back from %d to %d", f.id, f.after, page.NextAfter)
		}
		f.after = page.NextAfter
		for _, it := range page.Items {
			if n := len(f.items); n > 0 && it.Seq <= f.items[n-1].Seq {
				f.t.Fatalf("feed of %s: seq %d after %d", f.id, it.Seq, f.items[n-1].Seq)
			}
			f.items = append(f.items, it)
			if it.Type == typ {
				return true
			}
		}
		if len(page.Items) == 0 && engine.RunStatus(page.Status).Finished() {
			return false
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("feed of %s: no %s within %s; items so far: %v", f.id, typ, within, f.types())
		}
	}
}

func (f *researchFollower) types() []string {
	out := make([]string, len(f.items))
	for i, it := range f.items {
		out[i] = it.Type + "/" + it.Node
	}
	return out
}

// of returns the items of type typ read so far.
func (f *researchFollower) of(typ string) []feedItem {
	var out []feedItem
	for _, it := range f.items {
		if it.Type == typ {
			out = append(out, it)
		}
	}
	return out
}

// findingSources returns the sources of state's findings, in order.
func findingSources(t *testing.T, state json.RawMessage) []string {
	t.Helper()
	var s examples.ResearchState
	if err := json.Unmarshal(state, &s); err != nil {
		t.Fatalf("decode state %s: %v", state, err)
	}
	out := make([]string, len(s.Findings))
	for i, f := range s.Findings {
		out[i] = f.Source
	}
	return out
}

// driveResearchAgent starts research_agent run id on sources (two at least: the second
// search branch fails its first attempt), follows its feed until it waits for approval,
// checks its branches, approves it and follows it to the end. It returns the final state.
func driveResearchAgent(t *testing.T, call caller, id string, sources []string, within time.Duration) examples.ResearchState {
	t.Helper()
	src, _ := json.Marshal(sources)
	if code, body := call("POST", "/api/graphs/research_agent/runs",
		`{"instance_id":"`+id+`","input":{"question":"Is Go fast?","sources":`+string(src)+`}}`); code != http.StatusAccepted {
		t.Fatalf("start %s: %d %s", id, code, body)
	}
	f := &researchFollower{t: t, call: call, id: id}
	if !f.until(engine.HistoryWaitStarted, within) {
		t.Fatalf("run %s finished without waiting: %v", id, f.types())
	}

	branches := f.of(engine.HistoryBranchCompleted)
	if len(branches) != len(sources) {
		t.Fatalf("run %s: %d branch_completed items, want %d: %v", id, len(branches), len(sources), f.types())
	}
	for i, b := range branches {
		var d struct {
			Index   int    `json:"index"`
			Item    string `json:"item"`
			Attempt int    `json:"attempt"`
		}
		_ = json.Unmarshal(b.Data, &d)
		want := 1
		if i == examples.FlakyBranch {
			want = 2
		}
		if d.Index != i || d.Item != sources[i] || d.Attempt != want {
			t.Fatalf("run %s: branch item %d = %s, want item %s on attempt %d", id, i, b.Data, sources[i], want)
		}
	}
	var searched []string
	for _, c := range f.of(engine.HistoryCustom) {
		var d struct {
			Name string `json:"name"`
			Data struct {
				Source string `json:"source"`
			} `json:"data"`
		}
		_ = json.Unmarshal(c.Data, &d)
		if c.Name != "searched" || d.Name != "searched" || c.Node != "search" {
			t.Fatalf("run %s: custom item %s %s %s", id, c.Name, c.Node, c.Data)
		}
		searched = append(searched, d.Data.Source)
	}
	if !slices.Equal(searched, sources) {
		t.Fatalf("run %s: searched events for %v, want %v", id, searched, sources)
	}
	joined := f.of(engine.HistoryBranchesJoined)
	if len(joined) != 1 {
		t.Fatalf("run %s: %d branches_joined items", id, len(joined))
	}
	// The join's row records what it changed (research_agent has reducers): its state is the
	// fold of the feed's items up to it, from the run's start.
	var joinState json.RawMessage
	for _, it := range f.items {
		var err error
		if joinState, _, err = engine.FoldState(joinState, engine.HistoryEvent{Sequence: it.Seq, Type: it.Type, Data: it.Data}); err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		if it.Seq == joined[0].Seq {
			break
		}
	}
	if got := findingSources(t, joinState); !slices.Equal(got, sources) {
		t.Fatalf("run %s: findings of sources %v at the join, want %v", id, got, sources)
	}

	code, body := call("GET", "/api/runs/"+id, "")
	var st struct {
		Status string `json:"runtime_status"`
		Custom struct {
			Waiting string `json:"waiting_for_event"`
			Resume  string `json:"resume_node"`
		} `json:"custom_status"`
	}
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil || st.Status != string(engine.StatusRunning) ||
		st.Custom.Waiting != "approval" || st.Custom.Resume != "review" {
		t.Fatalf("run %s while waiting: %d %s", id, code, body)
	}
	if code, body := call("POST", "/api/runs/"+id+"/events/approval", `{"reviewer":"ana"}`); code != http.StatusBadRequest ||
		!strings.Contains(string(body), "field 'approved': field required") {
		t.Fatalf("approval without its decision: %d %s", code, body)
	}
	if code, body := call("POST", "/api/runs/"+id+"/events/approval", `{"approved":true,"reviewer":"ana"}`); code != http.StatusAccepted {
		t.Fatalf("approval of %s: %d %s", id, code, body)
	}
	if !f.until(engine.HistoryRunCompleted, within) {
		t.Fatalf("run %s ended without completing: %v", id, f.types())
	}
	code, body = call("GET", "/api/runs/"+id, "")
	var done struct {
		Status string `json:"runtime_status"`
		Output struct {
			FinalNode string          `json:"final_node"`
			State     json.RawMessage `json:"state"`
		} `json:"output"`
	}
	if err := json.Unmarshal(body, &done); code != http.StatusOK || err != nil || done.Status != string(engine.StatusCompleted) || done.Output.FinalNode != "publish" {
		t.Fatalf("run %s after approval: %d %s", id, code, body)
	}
	var final examples.ResearchState
	if err := json.Unmarshal(done.Output.State, &final); err != nil {
		t.Fatal(err)
	}
	if got := findingSources(t, done.Output.State); !slices.Equal(got, sources) || !strings.HasSuffix(final.Published, "\nApproved by ana.") {
		t.Fatalf("run %s final state %s", id, done.Output.State)
	}
	return final
}

// TestResearchAgent_BothTransports drives research_agent through the standalone server and
// the emulated host (custom handler), in memory: refused starts are 400 and store nothing; a
// run fans out, retries its flaky branch, waits for approval with the findings in source
// order, and completes on approval.
func TestResearchAgent_BothTransports(t *testing.T) {
	for _, tr := range memoryApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			call := func(method, path, body string) (int, []byte) {
				t.Helper()
				code, b := do(t, tr, method, path, body)
				return code, []byte(b)
			}
			id := "research-" + tr.Name
			if code, body := call("POST", "/api/graphs/research_agent/runs", `{"instance_id":"`+id+`","input":{"question":"q","sources":[]}}`); code != http.StatusBadRequest ||
				!strings.Contains(string(body), `"error": "invalid initial state"`) || !strings.Contains(string(body), "sources must name at least one source") {
				t.Fatalf("start without sources: %d %s", code, body)
			}
			if code, body := call("GET", "/api/runs/"+id, ""); code != http.StatusNotFound {
				t.Fatalf("a refused start stored its run: %d %s", code, body)
			}
			driveResearchAgent(t, call, id, []string{"arxiv", "wikipedia", "news"}, 30*time.Second)
		})
	}
}
