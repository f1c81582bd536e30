package durabletest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// Agent is the state of agentLoop: a day's notes and what the generations before left.
type Agent struct {
	Goal    string   `json:"goal"`
	Notes   []string `json:"notes"`
	Summary string   `json:"summary"`
	Gen     int      `json:"gen"`
	Until   int      `json:"until"`
}

// agentLoop wakes once a day and takes a note; after two notes it continues as new with a
// summary in place of its notes, until its generation reaches until.
func agentLoop() durable.GraphRegistration[Agent] {
	b := durable.NewManifestBuilder[Agent]("agent_loop")
	b.SetEntrypoint("wake")
	_ = b.AddStep("wake", func(_ context.Context, a Agent) (Agent, error) {
		a.Notes = append(a.Notes, fmt.Sprintf("g%d-n%d", a.Gen, len(a.Notes)))
		return a, nil
	}, durable.WithDecide(func(_ context.Context, a Agent) (durable.RouteDecision, error) {
		switch {
		case len(a.Notes) < 2:
			return durable.Sleep(24*time.Hour, "wake"), nil
		case a.Gen < a.Until:
			summary := strings.TrimPrefix(a.Summary+","+strings.Join(a.Notes, "+"), ",")
			return durable.ContinueAsNew(Agent{Goal: a.Goal, Summary: summary, Gen: a.Gen + 1, Until: a.Until}), nil
		}
		return durable.Complete("done"), nil
	}))
	g, _ := b.Build()
	return g
}

// TestKit_ContinueAsNew_ThreeTimes_FeedFollows: the kit runs a graph that continues as new
// three times on its fake clock; a feed reader that resumes from where it stopped, a day at a
// time, reads every row of every generation in order, each generation marked.
func TestKit_ContinueAsNew_ThreeTimes_FeedFollows(t *testing.T) {
	kit := durabletest.New(t, agentLoop(), durabletest.Options{})
	kit.Start("a1", Agent{Goal: "watch the queue", Until: 3})
	items, next := kit.Feed("a1", 0)
	for day := 0; day < 10 && kit.Run("a1").RuntimeStatus == durabletest.StatusRunning; day++ {
		kit.Advance(24 * time.Hour)
		more, n := kit.Feed("a1", next)
		items, next = append(items, more...), n
	}
	if got := kit.Run("a1").RuntimeStatus; got != durabletest.StatusCompleted {
		t.Fatalf("status %s", got)
	}
	var marks []string
	for i, it := range items {
		if it.Sequence != int64(i)+1 {
			t.Fatalf("feed item %d has seq %d: the feed lost or repeated rows", i, it.Sequence)
		}
		if it.Type == durabletest.HistoryContinuedAsNew {
			var d struct {
				Generation int             `json:"generation"`
				Initial    json.RawMessage `json:"initial_state"`
			}
			if err := json.Unmarshal(it.Data, &d); err != nil {
				t.Fatal(err)
			}
			marks = append(marks, fmt.Sprintf("%d:%s", d.Generation, d.Initial))
		}
	}
	want := []string{
		`1:{"goal":"watch the queue","notes":[],"summary":"g0-n0+g0-n1","gen":1,"until":3}`,
		`2:{"goal":"watch the queue","notes":[],"summary":"g0-n0+g0-n1,g1-n0+g1-n1","gen":2,"until":3}`,
		`3:{"goal":"watch the queue","notes":[],"summary":"g0-n0+g0-n1,g1-n0+g1-n1,g2-n0+g2-n1","gen":3,"until":3}`,
	}
	if got := strings.Join(marks, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("generations the feed marked:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if items[len(items)-1].Type != durabletest.HistoryRunCompleted {
		t.Fatalf("the feed ends with %s", items[len(items)-1].Type)
	}
	if g := kit.Generation("a1"); g != 3 {
		t.Fatalf("generation %d", g)
	}
	if g := kit.RunState("a1").Generation; g != 3 {
		t.Fatalf("the run's state says generation %d", g)
	}
	// History, State and Visits read the last generation; the one before stays readable.
	if got := kit.Final("a1"); strings.Join(got.Notes, " ") != "g3-n0 g3-n1" || got.Gen != 3 {
		t.Fatalf("final state %+v", got)
	}
	if v := kit.Visits("a1"); len(v) != 2 {
		t.Fatalf("visits of the last generation: %v", v)
	}
	if h := kit.History("a1"); h[0].Type != durabletest.HistoryContinuedAsNew {
		t.Fatalf("the last generation's history begins with %s", h[0].Type)
	}
	prev := kit.GenerationHistory("a1", 2)
	if prev[0].Type != durabletest.HistoryContinuedAsNew || prev[len(prev)-1].Type != durabletest.HistoryRouteResolved {
		t.Fatalf("generation 2: %s … %s", prev[0].Type, prev[len(prev)-1].Type)
	}
	if s := kit.StateAfter("a1", prev[len(prev)-1].Sequence); strings.Join(s.Notes, " ") != "g2-n0 g2-n1" {
		t.Fatalf("state at the end of generation 2: %+v", s)
	}
}

// Generation tells how often a run continued as new; History reads its current generation,
// GenerationHistory the one before, and Feed follows it across them.
func ExampleKit_Generation() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, agentLoop(), durabletest.Options{})
	kit.Start("a1", Agent{Goal: "watch the queue", Until: 1})
	kit.Advance(24 * time.Hour) // the second note: the run continues as new
	if g := kit.Generation("a1"); g != 1 {
		t.Fatalf("generation %d", g)
	}
	if h := kit.History("a1"); h[0].Type != durabletest.HistoryContinuedAsNew {
		t.Fatalf("history begins with %s", h[0].Type)
	}
	ended := kit.GenerationHistory("a1", 0) // run_started … the route that continued
	_ = ended
}

// TestKit_Generation runs ExampleKit_Generation's body with a real t.
func TestKit_Generation(t *testing.T) {
	kit := durabletest.New(t, agentLoop(), durabletest.Options{})
	kit.Start("a1", Agent{Goal: "watch the queue", Until: 1})
	kit.Advance(24 * time.Hour)
	if g := kit.Generation("a1"); g != 1 {
		t.Fatalf("generation %d", g)
	}
	if h := kit.History("a1"); h[0].Type != durabletest.HistoryContinuedAsNew {
		t.Fatalf("history begins with %s", h[0].Type)
	}
	if ended := kit.GenerationHistory("a1", 0); ended[0].Type != durabletest.HistoryRunStarted {
		t.Fatalf("generation 0 begins with %s", ended[0].Type)
	}
}

// Feed reads a run's feed after a position, as a client of the runs API does; a position
// taken before a continue-as-new reads on into the new generation.
func ExampleKit_Feed() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, agentLoop(), durabletest.Options{})
	kit.Start("a1", Agent{Goal: "watch the queue", Until: 1})
	_, next := kit.Feed("a1", 0) // generation 0, asleep after its first note
	kit.Advance(24 * time.Hour)  // its second note; it continues as new
	items, _ := kit.Feed("a1", next)
	for _, it := range items {
		if it.Type == durabletest.HistoryContinuedAsNew {
			return // the new generation begins
		}
	}
	t.Fatal("the feed did not reach the new generation")
}

// TestKit_Feed runs ExampleKit_Feed's body with a real t.
func TestKit_Feed(t *testing.T) {
	kit := durabletest.New(t, agentLoop(), durabletest.Options{})
	kit.Start("a1", Agent{Goal: "watch the queue", Until: 1})
	_, next := kit.Feed("a1", 0)
	kit.Advance(24 * time.Hour)
	items, _ := kit.Feed("a1", next)
	var types []string
	for _, it := range items {
		types = append(types, it.Type)
	}
	if !strings.Contains(strings.Join(types, " "), durabletest.HistoryContinuedAsNew) {
		t.Fatalf("the feed after %d: %v", next, types)
	}
}
