package runsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// cycleState is the state of cycleGraph.
type cycleState struct {
	Turn  int `json:"turn"`
	Gen   int `json:"gen"`
	Until int `json:"until"`
}

// cycleGraph builds "cycle": work visits twice a generation, waiting for "tick" after the
// first visit, then continues as new with gen one more until gen reaches until.
func cycleGraph(t testing.TB) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[cycleState]("cycle")
	b.SetEntrypoint("work")
	if err := b.AddStep("work", func(_ context.Context, s cycleState) (cycleState, error) {
		s.Turn++
		return s, nil
	}, durable.WithDecide(func(_ context.Context, s cycleState) (durable.RouteDecision, error) {
		switch {
		case s.Turn < 2:
			return durable.WaitForEvent("tick", "work"), nil
		case s.Gen < s.Until:
			return durable.ContinueAsNew(cycleState{Gen: s.Gen + 1, Until: s.Until}), nil
		}
		return durable.Complete("done"), nil
	})); err != nil {
		t.Fatal(err)
	}
	durable.OnEvent(b, "tick", func(_ context.Context, s cycleState, _ struct{}) (cycleState, error) { return s, nil })
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// pollGeneration polls the run's status until it waits in generation gen, or (with done)
// is finished in it, and returns the body.
func pollGeneration(t *testing.T, tr funchosttest.Transport, id string, gen int, done bool) string {
	t.Helper()
	for range 1500 {
		res := runsapitest.Call(t, tr, "GET", "/api/runs/"+id, "")
		var v struct {
			runsapitest.StatusView
			Generation *int `json:"generation"`
		}
		if err := json.Unmarshal([]byte(res.Body), &v); err != nil || res.Status != 200 {
			t.Fatalf("status of %s: %d %s", id, res.Status, res.Body)
		}
		if v.Generation != nil && *v.Generation == 0 {
			t.Fatalf("status of %s: %s: generation 0 is written as no member", id, res.Body)
		}
		at := 0
		if v.Generation != nil {
			at = *v.Generation
		}
		if at == gen && (done && runsapitest.Finished(v.StatusView) || !done && runsapitest.Waiting(v.StatusView)) {
			return res.Body
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("run %s never reached generation %d", id, gen)
	return ""
}

// generationOf returns the generation a continued_as_new item's data names.
func generationOf(t *testing.T, data json.RawMessage) int {
	t.Helper()
	var d struct {
		Generation int `json:"generation"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("continued_as_new data %s: %v", data, err)
	}
	return d.Generation
}

// checkFeedFollowsContinues drives a run of cycle with until 3 through the runs API, a tick
// at a time, and reads its feed after each from the position the read before ended at: each
// read resumes with the previous generation's cursor and goes on into the new generation,
// which an item continued_as_new marks. The last generation is followed as an event stream
// to its end. The status then shows generation 3, the history the last generation, and
// ?generation=2 the one before.
func checkFeedFollowsContinues(t *testing.T, tr funchosttest.Transport, id string) {
	t.Helper()
	runsapitest.Start(t, tr, "cycle", id, `{"until": 3}`)
	pollGeneration(t, tr, id, 0, false)
	first := runsapitest.Feed(t, tr, id, "wait=0")
	cursor, run := first.NextAfter, first.Run
	tick := func() {
		runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/tick", `{}`).Expect(t, "tick", 202, "")
	}
	for gen := 1; gen <= 2; gen++ {
		tick()
		pollGeneration(t, tr, id, gen, false)
		page := runsapitest.Feed(t, tr, id, fmt.Sprintf("after=%d&run=%s&wait=0", cursor, run))
		if page.Run != run {
			t.Fatalf("the feed's run changed from %s to %s", run, page.Run)
		}
		var marks []int
		for i, it := range page.Items {
			if want := cursor + int64(i) + 1; it.Seq != want {
				t.Fatalf("generation %d: item %d has seq %d, want %d: the feed lost rows", gen, i, it.Seq, want)
			}
			if it.Type == "continued_as_new" {
				marks = append(marks, generationOf(t, it.Data))
			}
		}
		if len(marks) != 1 || marks[0] != gen {
			t.Fatalf("reading into generation %d, the feed marked generations %v", gen, marks)
		}
		cursor = page.NextAfter
	}
	// The rest as an event stream resumed from generation 2's cursor (Last-Event-ID).
	tick()
	pollGeneration(t, tr, id, 3, false)
	tick()
	pollGeneration(t, tr, id, 3, true)
	frames, _ := runsapitest.ReadEventStream(t, tr, id, cursor)
	var events []string
	for i, fr := range frames {
		if fr.Event == "end" {
			events = append(events, "end")
			continue
		}
		if want := cursor + int64(i) + 1; fr.ID != want || fr.Run != run {
			t.Fatalf("frame %d: id %d.%s, want %d.%s", i, fr.ID, fr.Run, want, run)
		}
		if fr.Event == "continued_as_new" {
			var item runsapitest.FeedItem
			_ = json.Unmarshal([]byte(fr.Data), &item)
			events = append(events, fmt.Sprintf("continued_as_new(%d)", generationOf(t, item.Data)))
		}
		if fr.Event == "run_completed" {
			events = append(events, "run_completed")
		}
	}
	if got := strings.Join(events, " "); got != "continued_as_new(3) run_completed end" {
		t.Fatalf("the stream's frames: %s", got)
	}
	// History: the current generation; ?generation=2 the one before; older ones are gone.
	var hist struct {
		Events []struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
	}
	res := runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history", "")
	if err := json.Unmarshal([]byte(res.Body), &hist); err != nil || res.Status != 200 || hist.Events[0].Type != "continued_as_new" || generationOf(t, hist.Events[0].Data) != 3 {
		t.Fatalf("history: %d %s", res.Status, res.Body)
	}
	res = runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?generation=2", "")
	if err := json.Unmarshal([]byte(res.Body), &hist); err != nil || res.Status != 200 || hist.Events[0].Type != "continued_as_new" || generationOf(t, hist.Events[0].Data) != 2 {
		t.Fatalf("history of generation 2: %d %s", res.Status, res.Body)
	}
	runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?generation=1", "").Expect(t, "history of generation 1", 404,
		`{"error": "run '`+id+`' keeps the history of generations 2 and 3 only; generation 1 was deleted when the run continued as new"}`)
	runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?generation=4", "").Expect(t, "history of generation 4", 404,
		`{"error": "run '`+id+`' is at generation 3; it has no generation 4"}`)
	runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/history?generation=-1", "").Expect(t, "history of generation -1", 400,
		`{"error": "invalid query parameter 'generation': want an integer of 0 or more"}`)
}

// TestContinueAsNew_FeedFollows_BothTransports: a run that continues as new three times is
// followed by its feed across every generation, as JSON and as an event stream.
func TestContinueAsNew_FeedFollows_BothTransports(t *testing.T) {
	_, trs := serveFeeds(t, runsapi.Options{}, cycleGraph(t))
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			checkFeedFollowsContinues(t, tr, runsapitest.UniqueID(tr, "cycle"))
		})
	}
}
