package exampleapp_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// runSizes returns, as identity who sees them over HTTP, the bytes of run id's initial state,
// of its state (its output's state once finished, else the state of its newest history row
// carrying one) and of its largest history row's data, all as the API encodes them.
func runSizes(t *testing.T, tr funchosttest.Transport, who, id string) (input, state, largestRow int) {
	t.Helper()
	token := ""
	for {
		path := "/api/runs/" + id + "/history?limit=1000"
		if token != "" {
			path += "&continuation_token=" + url.QueryEscape(token)
		}
		code, body := doAs(t, tr, who, tr.FunctionKey, "GET", path, "")
		var page struct {
			Events []struct {
				Data json.RawMessage `json:"data"`
			} `json:"events"`
			ContinuationToken string `json:"continuation_token"`
		}
		if err := json.Unmarshal([]byte(body), &page); code != 200 || err != nil {
			t.Fatalf("history of %s: %d %.300s", id, code, body)
		}
		for _, ev := range page.Events {
			largestRow = max(largestRow, len(ev.Data))
			var d struct {
				State json.RawMessage `json:"state"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && len(d.State) > 0 {
				state = len(d.State)
			}
		}
		if token = page.ContinuationToken; token == "" {
			break
		}
	}
	code, body := doAs(t, tr, who, tr.FunctionKey, "GET", "/api/runs/"+id, "")
	var run struct {
		Input struct {
			InitialState json.RawMessage `json:"initial_state"`
		} `json:"input"`
		Output json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal([]byte(body), &run); code != 200 || err != nil {
		t.Fatalf("get %s: %d %.300s", id, code, body)
	}
	var out struct {
		State json.RawMessage `json:"state"`
	}
	if json.Unmarshal(run.Output, &out) == nil && len(out.State) > 0 {
		state = len(out.State)
	}
	return len(run.Input.InitialState), state, largestRow
}

// settle waits until run id is finished or waits for an event, and returns it.
func settle(t *testing.T, e embedded, id string) engine.Run {
	t.Helper()
	run, err := e.app.Engine.WaitRun(t.Context(), id, engine.RunSettled)
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	return run
}

// TestIsolation_ResearchAgent_LargeInputIsRefusedAndDerivedStateBounded: with isolation on, a
// research_agent start with a 1 MiB question is refused (400, naming the bound) and stores
// nothing; a start at every input bound (the longest question, the most and longest sources,
// the longest reviewer) runs through a rejection, a revision and an approval to the end
// with its state, and its largest history row, within a small multiple of its input: each
// summary and the draft quote a bounded excerpt of the question, not all of it.
func TestIsolation_ResearchAgent_LargeInputIsRefusedAndDerivedStateBounded(t *testing.T) {
	sources := make([]string, examples.MaxSources)
	for i := range sources {
		prefix := fmt.Sprintf("source-%02d-", i)
		sources[i] = prefix + strings.Repeat("s", examples.MaxSourceBytes-len(prefix))
	}
	src, _ := json.Marshal(sources)
	short := make([]string, examples.MaxSources)
	for i := range short {
		short[i] = fmt.Sprintf("s%02d", i)
	}
	shortSrc, _ := json.Marshal(short)
	for _, e := range embeddedApps(t, nil, true) {
		t.Run(e.tr.Name, func(t *testing.T) {
			key := e.tr.FunctionKey
			b := e.settings.MemoryBudget

			// A 1 MiB question on as many sources as a run may search: the body fits the
			// request cap, the question does not fit its bound.
			big := strings.Repeat("q", 1<<20-1000)
			before := b.Used()
			code, body := doAs(t, e.tr, "alice", key, "POST", "/api/graphs/research_agent/runs",
				`{"instance_id":"big","input":{"question":"`+big+`","sources":`+string(shortSrc)+`}}`)
			if code == 202 {
				run := settle(t, e, "big")
				_, state, row := runSizes(t, e.tr, "alice", "big")
				t.Fatalf("a start with a %d-byte question was admitted: its run, %s at %s (%.200s), holds %d bytes of state, its largest history row %d bytes (budget: %d bytes used)",
					len(big), run.RuntimeStatus, run.CustomStatus, run.Output, state, row, b.Used())
			}
			want := fmt.Sprintf(`{"error": "invalid initial state", "details": [{"loc": [], "msg": "question must be at most %d bytes, got %d"}]}`,
				examples.MaxQuestionBytes, len(big))
			if code != 400 || body != want {
				t.Fatalf("a start with a 1 MiB question: %d %.300s, want 400 %s", code, body, want)
			}
			if code, body := doAs(t, e.tr, "alice", key, "GET", "/api/runs/big", ""); code != 404 {
				t.Fatalf("the refused start stored a run: %d %.300s", code, body)
			}
			if used := b.Used(); used != before {
				t.Fatalf("the refused start holds %d bytes of the budget", used-before)
			}

			// Every input at its bound: 2-byte runes, so an excerpt cut in the middle of one
			// would show as invalid UTF-8 in the state.
			question := strings.Repeat("é", examples.MaxQuestionBytes/2)
			reviewer := strings.Repeat("r", examples.MaxReviewerBytes)
			input := `{"question":"` + question + `","sources":` + string(src) + `}`
			if code, body := doAs(t, e.tr, "alice", key, "POST", "/api/graphs/research_agent/runs",
				`{"instance_id":"full","input":`+input+`}`); code != 202 {
				t.Fatalf("a start at the bounds: %d %.300s", code, body)
			}
			call := func(method, path, body string) (int, []byte) {
				t.Helper()
				code, b := doAs(t, e.tr, "alice", key, method, path, body)
				return code, []byte(b)
			}
			f := &researchFollower{t: t, call: call, id: "full"}
			if !f.until(engine.HistoryWaitStarted, 30*time.Second) {
				t.Fatalf("run at the bounds finished without waiting: %v", f.types())
			}
			tooLong := `{"approved":true,"reviewer":"` + reviewer + `r"}`
			if code, body := call("POST", "/api/runs/full/events/approval", tooLong); code != 400 ||
				!strings.Contains(string(body), fmt.Sprintf("reviewer must be at most %d bytes, got %d", examples.MaxReviewerBytes, len(reviewer)+1)) {
				t.Fatalf("an approval past the reviewer's bound: %d %.300s, want 400", code, body)
			}
			// Rejected once (a revision drafted from the same findings), then approved.
			if code, body := call("POST", "/api/runs/full/events/approval", `{"approved":false,"reviewer":"`+reviewer+`"}`); code != 202 {
				t.Fatalf("rejection: %d %.300s", code, body)
			}
			if !f.until(engine.HistoryWaitStarted, 30*time.Second) {
				t.Fatalf("run at the bounds finished without a revision: %v", f.types())
			}
			if code, body := call("POST", "/api/runs/full/events/approval", `{"approved":true,"reviewer":"`+reviewer+`"}`); code != 202 {
				t.Fatalf("approval: %d %.300s", code, body)
			}
			if !f.until(engine.HistoryRunCompleted, 30*time.Second) {
				t.Fatalf("run at the bounds ended without completing: %v", f.types())
			}
			run := settle(t, e, "full")
			var out struct {
				State examples.ResearchState `json:"state"`
			}
			if err := json.Unmarshal(run.Output, &out); err != nil || run.RuntimeStatus != engine.StatusCompleted ||
				out.State.Revisions != 1 || !strings.HasSuffix(out.State.Published, ".") || len(out.State.Findings) != examples.MaxSources {
				t.Fatalf("run at the bounds: %s %v %.300s", run.RuntimeStatus, err, run.Output)
			}
			stored, state, row := runSizes(t, e.tr, "alice", "full")
			t.Logf("input %d bytes: state %d bytes, largest history row %d bytes", stored, state, row)
			if limit := 4 * stored; state > limit || row > limit {
				t.Fatalf("an input of %d bytes grew to %d bytes of state, a history row of %d bytes: want at most %d",
					stored, state, row, limit)
			}
		})
	}
}
