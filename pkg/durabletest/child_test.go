package durabletest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

type trip struct {
	City   string   `json:"city"`
	Hotel  *booking `json:"hotel"`
	Booked bool     `json:"booked"`
}

type booking struct {
	City      string `json:"city"`
	Confirmed bool   `json:"confirmed"`
}

// tripGraph books a hotel in a child run of "hotels" and goes on at "done".
func tripGraph(t testing.TB) durable.GraphRegistration[trip] {
	t.Helper()
	b := durable.NewManifestBuilder[trip]("trips")
	b.SetEntrypoint("plan")
	_ = b.AddStep("plan", func(_ context.Context, s trip) (trip, error) { return s, nil },
		durable.WithDecide(func(_ context.Context, s trip) (durable.RouteDecision, error) {
			return durable.StartChild("hotels", booking{City: s.City}, "done").Into("hotel"), nil
		}))
	_ = b.AddStep("done", func(_ context.Context, s trip) (trip, error) {
		s.Booked = s.Hotel != nil && s.Hotel.Confirmed
		return s, nil
	}, durable.Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// hotelGraph waits for the hotel's "confirm" for a day; without it the booking fails.
func hotelGraph(t testing.TB) durable.GraphRegistration[booking] {
	t.Helper()
	b := durable.NewManifestBuilder[booking]("hotels")
	b.SetEntrypoint("ask")
	_ = b.AddStep("ask", func(_ context.Context, s booking) (booking, error) { return s, nil },
		durable.WithDecide(func(context.Context, booking) (durable.RouteDecision, error) {
			return durable.WaitForEvent("confirm", "confirmed").Within(24*time.Hour, ""), nil
		}))
	_ = b.AddStep("confirmed", func(_ context.Context, s booking) (booking, error) {
		s.Confirmed = true
		return s, nil
	}, durable.Terminal())
	_ = durable.OnEvent(b, "confirm", func(_ context.Context, s booking, _ struct{}) (booking, error) { return s, nil })
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A kit drives a parent and its child runs together, deterministically: the child waits for
// an event, the parent for the child, and the fake clock fires the child's wait timeout.
func TestKit_ChildRuns(t *testing.T) {
	t.Parallel()
	kit := durabletest.New(t, tripGraph(t), durabletest.Options{Graphs: []durable.Graph{hotelGraph(t)}})
	run := kit.Start("t1", trip{City: "Lyon"})
	p, _ := run.Progress()
	if run.RuntimeStatus != durabletest.StatusRunning || !strings.HasPrefix(p.WaitingForChild, durabletest.ChildRunPrefix) {
		t.Fatalf("parent %s, progress %+v", run.RuntimeStatus, p)
	}
	child := kit.Run(p.WaitingForChild)
	if ev, _ := child.WaitingFor(); ev != "confirm" || child.ParentInstanceID != "t1" {
		t.Fatalf("child waits for %q, parent %q", ev, child.ParentInstanceID)
	}
	if at := kit.RunState("t1").At; at.WaitingForChild != child.InstanceID || len(at.Nodes) != 0 || len(at.WaitingFor) != 0 {
		t.Fatalf("the parent stands at %+v, want waiting for its child %s", at, child.InstanceID)
	}
	if at := kit.RunState(child.InstanceID).At; !slices.Equal(at.WaitingFor, []string{"confirm"}) || !at.WaitDeadline.Equal(kit.Now().Add(24*time.Hour)) {
		t.Fatalf("the child stands at %+v, want waiting for confirm for 24h", at)
	}
	kit.Send(child.InstanceID, "confirm", nil)
	if got := kit.Final("t1"); !got.Booked || got.Hotel == nil || got.Hotel.City != "Lyon" {
		t.Fatalf("final %+v", got)
	}
	if visits := strings.Join(kit.Visits("t1"), " "); visits != "plan done" {
		t.Fatalf("visits %s", visits)
	}

	// A child whose wait times out fails; its parent fails naming it.
	run = kit.Start("t2", trip{City: "Oslo"})
	p, _ = run.Progress()
	kit.Advance(25 * time.Hour)
	run = kit.Run("t2")
	want := "orchestrator failed: child run '" + p.WaitingForChild + "' of graph 'hotels' failed: orchestrator failed: wait for event 'confirm' timed out after 24h0m0s"
	if run.RuntimeStatus != durabletest.StatusFailed || run.FailureMessage() != want {
		t.Fatalf("parent %s %q\nwant %q", run.RuntimeStatus, run.FailureMessage(), want)
	}
}
