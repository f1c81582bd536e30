package examples

import (
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// These tests drive research_agent on the real engine through the durabletest kit, with no
// graph policy: the search branch's retry is the search node's own (durable.WithRetry).

var researchSources = []string{"arxiv", "wikipedia", "news"}

func researchKit(t *testing.T, seed int64) *durabletest.Kit[ResearchState] {
	t.Helper()
	return durabletest.New(t, MustResearchAgent(), durabletest.Options{Logger: slog.New(slog.DiscardHandler), ShuffleSeed: seed})
}

// startResearch starts run id on three sources and advances past the flaky branch's back-off
// (one second), so that the run waits for its approval.
func startResearch(t *testing.T, kit *durabletest.Kit[ResearchState], id string) {
	t.Helper()
	run := kit.Start(id, ResearchState{Question: "Is Go fast?", Sources: researchSources})
	if _, waiting := run.WaitingFor(); waiting || run.RuntimeStatus != durabletest.StatusRunning {
		t.Fatalf("before the flaky branch's retry: %s, waiting %v; want Running at the fan-out", run.RuntimeStatus, waiting)
	}
	kit.Advance(999 * time.Millisecond)
	if _, waiting := kit.Run(id).WaitingFor(); waiting {
		t.Fatal("joined before the flaky branch's back-off was over")
	}
	kit.Advance(time.Millisecond)
	if ev, ok := kit.Run(id).WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("after the retry: waiting for %q (%v), status %s", ev, ok, kit.Run(id).RuntimeStatus)
	}
}

// historyRows returns the rows of type typ.
func historyRows(h []durabletest.HistoryEvent, typ string) []durabletest.HistoryEvent {
	var out []durabletest.HistoryEvent
	for _, e := range h {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// joinedState is the state after run id's last branches_joined row (the kit rebuilds it from
// the history: the row records what the join changed).
func joinedState(t *testing.T, kit *durabletest.Kit[ResearchState], id string) ResearchState {
	t.Helper()
	h := kit.History(id)
	rows := historyRows(h, durabletest.HistoryBranchesJoined)
	if len(rows) == 0 {
		t.Fatalf("no branches_joined row: %v", historyTypes(h))
	}
	return kit.StateAfter(id, rows[len(rows)-1].Sequence)
}

func findingSources(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Source
	}
	return out
}

// TestKit_ResearchAgent_FansOutRetriesJoinsInOrderAndPublishes: whatever order the branches
// run in, the run waits for approval with one finding per source in the order of the sources;
// its history shows the three branches (branch 1 on its second attempt) and their three
// "searched" events; an approval publishes the draft.
func TestKit_ResearchAgent_FansOutRetriesJoinsInOrderAndPublishes(t *testing.T) {
	t.Parallel()
	for _, seed := range []int64{0, 1, 2, 3} {
		kit := researchKit(t, seed)
		startResearch(t, kit, "r1")
		h := kit.History("r1")

		if got := findingSources(joinedState(t, kit, "r1").Findings); !slices.Equal(got, researchSources) {
			t.Fatalf("seed %d: findings of sources %v, want %v", seed, got, researchSources)
		}
		branches := historyRows(h, durabletest.HistoryBranchCompleted)
		if len(branches) != 3 || len(historyRows(h, durabletest.HistoryBranchFailed)) != 0 {
			t.Fatalf("seed %d: history %v, want 3 branch_completed", seed, historyTypes(h))
		}
		for i, b := range branches {
			var d struct {
				Index   int    `json:"index"`
				Item    string `json:"item"`
				Attempt int    `json:"attempt"`
			}
			if err := json.Unmarshal(b.Data, &d); err != nil {
				t.Fatal(err)
			}
			want := 1
			if i == FlakyBranch {
				want = 2
			}
			if d.Index != i || d.Item != researchSources[i] || d.Attempt != want || b.Node != "search" {
				t.Fatalf("seed %d: branch row %d = %s on %s, want index %d item %s attempt %d", seed, i, b.Data, b.Node, i, researchSources[i], want)
			}
		}
		var searched []string
		for _, c := range historyRows(h, durabletest.HistoryCustom) {
			var d struct {
				Name string `json:"name"`
				Data struct {
					Source  string `json:"source"`
					Attempt int    `json:"attempt"`
				} `json:"data"`
			}
			if err := json.Unmarshal(c.Data, &d); err != nil {
				t.Fatal(err)
			}
			if c.Name != "searched" || d.Name != "searched" || c.Node != "search" {
				t.Fatalf("seed %d: custom row %s %s %s", seed, c.Name, c.Node, c.Data)
			}
			searched = append(searched, d.Data.Source)
		}
		if !slices.Equal(searched, researchSources) {
			t.Fatalf("seed %d: searched events for %v, want one per source %v", seed, searched, researchSources)
		}

		run := kit.Send("r1", "approval", Approval{Approved: true, Reviewer: "ana"})
		if run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("seed %d: after approval: %s %s", seed, run.RuntimeStatus, run.Output)
		}
		final := kit.Final("r1")
		if !slices.Equal(findingSources(final.Findings), researchSources) || final.Revisions != 0 || final.Escalated ||
			final.Published != final.Draft+"\nApproved by ana." || !strings.Contains(final.Draft, "wikipedia: ") {
			t.Fatalf("seed %d: final %+v", seed, final)
		}
		if v := strings.Join(kit.Visits("r1"), ","); v != "plan,search,search,search,draft,review,publish" {
			t.Fatalf("seed %d: visits %s", seed, v)
		}
	}
}

// TestKit_ResearchAgent_EscalatesAfterTheReviewWindow: no decision within ReviewWindow sends
// the run to escalate, which waits again; the late approval still publishes.
func TestKit_ResearchAgent_EscalatesAfterTheReviewWindow(t *testing.T) {
	t.Parallel()
	kit := researchKit(t, 0)
	startResearch(t, kit, "r2")
	kit.Advance(ReviewWindow - time.Second)
	if slices.Contains(kit.Visits("r2"), "escalate") {
		t.Fatal("escalated before the review window was over")
	}
	kit.Advance(time.Second)
	if ev, ok := kit.Run("r2").WaitingFor(); !ok || ev != "approval" || !slices.Contains(kit.Visits("r2"), "escalate") {
		t.Fatalf("after the review window: visits %v, waiting for %q %v", kit.Visits("r2"), ev, ok)
	}
	h := kit.History("r2")
	timedOut := historyRows(h, durabletest.HistoryWaitTimedOut)
	if len(timedOut) != 1 || !strings.Contains(string(timedOut[0].Data), `"next_node":"escalate"`) {
		t.Fatalf("wait_timed_out rows %v", timedOut)
	}
	if c := historyRows(h, durabletest.HistoryCustom); len(c) != 4 || c[3].Name != "escalated" || c[3].Node != "escalate" {
		t.Fatalf("custom rows %v, want 3 searched and escalated", c)
	}
	kit.Advance(10 * ReviewWindow) // the escalated wait has no deadline of its own
	if ev, ok := kit.Run("r2").WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("the escalated wait ended: %q %v, status %s", ev, ok, kit.Run("r2").RuntimeStatus)
	}
	if run := kit.Send("r2", "approval", Approval{Approved: true, Reviewer: "lead"}); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("after the late approval: %s %s", run.RuntimeStatus, run.Output)
	}
	if final := kit.Final("r2"); !final.Escalated || !strings.HasSuffix(final.Published, "\nApproved by lead.") {
		t.Fatalf("final %+v", final)
	}
}

// TestKit_ResearchAgent_RejectionsReviseThenEnd: a rejected draft is drafted again (a revision)
// and awaits a new decision; the rejection after MaxRevisions revisions ends the run
// unpublished.
func TestKit_ResearchAgent_RejectionsReviseThenEnd(t *testing.T) {
	t.Parallel()
	kit := researchKit(t, 0)
	startResearch(t, kit, "r3")
	run := kit.Send("r3", "approval", Approval{Approved: false, Reviewer: "bob"})
	if ev, ok := run.WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("after a rejection: %s, waiting for %q %v", run.RuntimeStatus, ev, ok)
	}
	if run := kit.Send("r3", "approval", Approval{Approved: true, Reviewer: "bob"}); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("after the approval of the revision: %s", run.RuntimeStatus)
	}
	final := kit.Final("r3")
	if final.Revisions != 1 || !strings.Contains(final.Draft, "(revision 1)") || !strings.HasPrefix(final.Published, final.Draft) {
		t.Fatalf("final %+v", final)
	}
	if v := strings.Join(kit.Visits("r3"), ","); v != "plan,search,search,search,draft,review,draft,review,publish" {
		t.Fatalf("visits %s", v)
	}

	startResearch(t, kit, "r4")
	for i := range MaxRevisions + 1 {
		run = kit.Send("r4", "approval", Approval{Approved: false, Reviewer: "bob"})
		if _, waiting := run.WaitingFor(); waiting != (i < MaxRevisions) {
			t.Fatalf("rejection %d: %s, waiting %v", i+1, run.RuntimeStatus, waiting)
		}
	}
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("after %d rejections: %s", MaxRevisions+1, run.RuntimeStatus)
	}
	final = kit.Final("r4")
	if final.Revisions != MaxRevisions+1 || final.Published != "" || final.Approved == nil || *final.Approved {
		t.Fatalf("final %+v", final)
	}
	if n := strings.Count(strings.Join(kit.Visits("r4"), ","), "draft"); n != MaxRevisions+1 {
		t.Fatalf("%d drafts, want %d: %v", n, MaxRevisions+1, kit.Visits("r4"))
	}
}

// TestKit_ResearchAgent_RefusesBadStarts: a blank question, no source, a blank source or too
// many sources are refused at start, and an approval without its decision at the event.
func TestKit_ResearchAgent_RefusesBadStarts(t *testing.T) {
	t.Parallel()
	kit := researchKit(t, 0)
	many := `"s"` + strings.Repeat(`,"s"`, MaxSources)
	for i, in := range []string{
		`{"question":" ","sources":["a"]}`,
		`{"question":"q","sources":[]}`,
		`{"question":"q","sources":["a"," "]}`,
		`{"question":"q","sources":[` + many + `]}`,
		`{"question":"q"}`,
	} {
		if _, err := kit.TryStartJSON("bad", in); !errors.Is(err, durable.ErrInvalidState) {
			t.Errorf("start %d %s: %v, want ErrInvalidState", i, in, err)
		}
	}
	if _, err := kit.Engine().GetRun(t.Context(), "bad"); !errors.Is(err, durabletest.ErrRunNotFound) {
		t.Fatalf("a refused start stored a run: %v", err)
	}
	startResearch(t, kit, "r5")
	if err := kit.Engine().RaiseEvent(t.Context(), "r5", "approval", json.RawMessage(`{"reviewer":"x"}`)); err == nil ||
		!strings.Contains(err.Error(), "field 'approved': field required") {
		t.Fatalf("approval without approved: %v", err)
	}
}

// TestResearchAgent_SearchOutsideABranchFailsForGood: search needs its branch's item; called
// as a plain node it fails with an error the engine does not retry.
func TestResearchAgent_SearchOutsideABranchFailsForGood(t *testing.T) {
	t.Parallel()
	_, err := searchSource(t.Context(), ResearchState{Question: "q", Sources: []string{"a"}})
	if !errors.Is(err, durable.ErrNotInBranch) || !durable.IsNonRetryable(err) {
		t.Fatalf("err = %v", err)
	}
}
