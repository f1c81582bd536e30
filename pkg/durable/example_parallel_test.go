package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Research is the state of a graph that researches several topics at once.
type Research struct {
	Topics  []string       `json:"topics" durable:"required"`
	Notes   []string       `json:"notes"`
	Sources map[string]int `json:"sources"`
	Summary string         `json:"summary"`
}

// researchGraph maps research over the topics, one branch per topic, and summarizes at the
// join. Notes are appended in topic order and sources merged by key, whichever branch
// finishes first.
func researchGraph() durable.GraphRegistration[Research] {
	b := durable.NewManifestBuilder[Research]("research")
	b.SetEntrypoint("plan")
	_ = b.AddStep("plan", func(_ context.Context, s Research) (Research, error) { return s, nil },
		durable.WithHandlerName("research.plan"),
		durable.WithDecide(func(_ context.Context, s Research) (durable.RouteDecision, error) {
			return durable.Map("summarize", "research", s.Topics), nil
		}), durable.WithRouteName("research.fan_out"))
	_ = b.AddStep("research", func(ctx context.Context, s Research) (Research, error) {
		topic, err := durable.BranchItem[string](ctx) // this branch's topic
		if err != nil {
			return s, err
		}
		s.Notes = append(s.Notes, "notes on "+topic)
		s.Sources[topic] = len(topic)
		return s, nil
	}, durable.WithHandlerName("research.research"))
	_ = b.AddStep("summarize", func(_ context.Context, s Research) (Research, error) {
		s.Summary = strings.Join(s.Notes, "; ")
		return s, nil
	}, durable.WithHandlerName("research.summarize"), durable.Terminal())
	_ = b.Reduce("notes", durable.Append)      // each branch's new notes, in topic order
	_ = b.Reduce("sources", durable.MergeKeys) // each branch's new keys
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// Map runs one branch per item, each a visit of the same node with its own item (as
// LangGraph's Send), wherever the engine's workers have capacity; the run continues at the
// join node with the branches' updates merged by the fields' reducers, in item order.
func ExampleMap() {
	reg := durable.NewRegistry()
	_ = reg.Register(researchGraph())
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "research", InstanceID: "r1",
		Input: json.RawMessage(`{"topics":["go","azure","durability"]}`)})
	run, _ := e.WaitRun(ctx, "r1", nil)
	s, _ := engine.DecodeState[Research](run)
	fmt.Println(run.RuntimeStatus)
	fmt.Println(s.Summary)
	fmt.Println(s.Sources)
	// Output:
	// Completed
	// notes on go; notes on azure; notes on durability
	// map[azure:5 durability:10 go:2]
}

// Review is the state of a graph whose checks run side by side.
type Review struct {
	Draft    string `json:"draft" durable:"required"`
	Spelling string `json:"spelling"`
	Facts    string `json:"facts"`
	Verdict  string `json:"verdict"`
}

func reviewGraph() durable.GraphRegistration[Review] {
	b := durable.NewManifestBuilder[Review]("review")
	b.SetEntrypoint("submit")
	_ = b.AddStep("submit", func(_ context.Context, s Review) (Review, error) { return s, nil },
		durable.WithHandlerName("review.submit"),
		durable.WithDecide(func(context.Context, Review) (durable.RouteDecision, error) {
			return durable.Parallel("decide", "spelling", "facts"), nil
		}), durable.WithRouteName("review.checks"))
	_ = b.AddStep("spelling", func(_ context.Context, s Review) (Review, error) {
		s.Spelling = "ok"
		return s, nil
	}, durable.WithHandlerName("review.spelling"))
	_ = b.AddStep("facts", func(_ context.Context, s Review) (Review, error) {
		s.Facts = fmt.Sprintf("%d claims checked", strings.Count(s.Draft, "."))
		return s, nil
	}, durable.WithHandlerName("review.facts"))
	_ = b.AddStep("decide", func(_ context.Context, s Review) (Review, error) {
		s.Verdict = "publish: spelling " + s.Spelling + ", " + s.Facts
		return s, nil
	}, durable.WithHandlerName("review.decide"), durable.Terminal())
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// Parallel runs several nodes at once on the same state, then continues at the join node.
// Branches that update different fields need no reducer; two that update the same field
// without one fail the run at the join.
func ExampleParallel() {
	reg := durable.NewRegistry()
	_ = reg.Register(reviewGraph())
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "review", InstanceID: "d1",
		Input: json.RawMessage(`{"draft":"Go is fast. Azure is big."}`)})
	run, _ := e.WaitRun(ctx, "d1", nil)
	s, _ := engine.DecodeState[Review](run)
	fmt.Println(run.RuntimeStatus, "-", s.Verdict)
	// Output: Completed - publish: spelling ok, 2 claims checked
}

// TestExampleMap_SameJoinWhateverTheOrder drives the Map example's branches in several
// orders with the test kit: the joined state is the same, and the history names each
// branch with its item.
func TestExampleMap_SameJoinWhateverTheOrder(t *testing.T) {
	var first Research
	for seed := range int64(6) {
		kit := durabletest.New(t, researchGraph(), durabletest.Options{ShuffleSeed: seed})
		kit.Start("r1", Research{Topics: []string{"a", "bb", "ccc", "dddd", "eeeee"}})
		got := kit.Final("r1")
		if seed == 0 {
			first = got
			if got.Summary != "notes on a; notes on bb; notes on ccc; notes on dddd; notes on eeeee" {
				t.Fatalf("summary %q", got.Summary)
			}
		} else if fmt.Sprint(got) != fmt.Sprint(first) {
			t.Fatalf("seed %d joined %+v, seed 0 %+v", seed, got, first)
		}
		items := []string{}
		for _, ev := range kit.History("r1") {
			if ev.Type == engine.HistoryBranchCompleted {
				var d struct {
					Item string `json:"item"`
				}
				_ = json.Unmarshal(ev.Data, &d)
				items = append(items, d.Item)
			}
		}
		if strings.Join(items, ",") != "a,bb,ccc,dddd,eeeee" {
			t.Fatalf("branch rows in history: %v", items)
		}
		if v := strings.Join(kit.Visits("r1"), ","); v != "plan,research,research,research,research,research,summarize" {
			t.Fatalf("visits %s", v)
		}
	}
}
