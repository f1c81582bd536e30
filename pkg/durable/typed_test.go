package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

type ticket struct {
	Subject  string `json:"subject" durable:"required"`
	Status   string `json:"status"`
	Count    int    `json:"count"`
	Approved bool   `json:"approved"`
	Reviewer string `json:"reviewer"`
}

type approval struct {
	Approved bool   `json:"approved"`
	Reviewer string `json:"reviewer"`
}

// The typed graph.
func openTyped(_ context.Context, s ticket) (ticket, error) {
	s.Status, s.Count = "open", s.Count+1
	return s, nil
}

func routeTyped(_ context.Context, s ticket) (durable.RouteDecision, error) {
	if !s.Approved {
		return durable.WaitForEvent("approval", "close").WithNote("needs approval"), nil
	}
	return durable.Next("close"), nil
}

func closeTyped(_ context.Context, s ticket) (ticket, error) {
	s.Status = "closed by " + s.Reviewer
	return s, nil
}

func approveTyped(_ context.Context, s ticket, p approval) (ticket, error) {
	s.Approved, s.Reviewer = p.Approved, p.Reviewer
	return s, nil
}

// Its map-based twin.
func openMap(_ context.Context, s ticket) (any, error) {
	return durable.Update{"status": "open", "count": s.Count + 1}, nil
}

func routeMap(_ context.Context, s ticket) (any, error) {
	if !s.Approved {
		return durable.WaitForEvent("approval", "close").WithNote("needs approval"), nil
	}
	return durable.Next("close"), nil
}

func closeMap(_ context.Context, s ticket) (any, error) {
	return durable.Update{"status": "closed by " + s.Reviewer}, nil
}

func approveMap(_ context.Context, _ ticket, payload json.RawMessage) (any, error) {
	var p approval
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, err
	}
	return durable.Update{"approved": p.Approved, "reviewer": p.Reviewer}, nil
}

func buildTyped(t *testing.T) durable.GraphRegistration[ticket] {
	t.Helper()
	b := durable.NewManifestBuilder[ticket]("tickets")
	b.SetEntrypoint("open")
	must(t, b.AddStep("open", openTyped, durable.WithHandlerName("tickets.open"),
		durable.WithDecide(routeTyped), durable.WithRouteName("tickets.route")))
	must(t, b.AddStep("close", closeTyped, durable.WithHandlerName("tickets.close"), durable.Terminal()))
	must(t, durable.OnEvent(b, "approval", approveTyped))
	g, err := b.Build()
	must(t, err)
	return g
}

func buildMap(t *testing.T) durable.GraphRegistration[ticket] {
	t.Helper()
	b := durable.NewManifestBuilder[ticket]("tickets")
	b.SetEntrypoint("open")
	must(t, b.AddNode("open", openMap, durable.WithHandlerName("tickets.open"),
		durable.WithRoute(routeMap), durable.WithRouteName("tickets.route")))
	must(t, b.AddNode("close", closeMap, durable.WithHandlerName("tickets.close"), durable.Terminal()))
	must(t, b.AddEventHandler("approval", approveMap))
	g, err := b.Build()
	must(t, err)
	return g
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runToQuiet handles every visible work item of q on eng until none is left; no sleeping.
func runToQuiet(t *testing.T, eng *engine.Engine, q *memory.Queue) {
	t.Helper()
	for range 1000 {
		msgs, err := q.Receive(t.Context(), 32, time.Minute)
		must(t, err)
		if len(msgs) == 0 {
			return
		}
		for _, m := range msgs {
			must(t, eng.HandleWorkItem(t.Context(), m.Body, m.DequeueCount))
			must(t, q.Delete(t.Context(), m))
		}
	}
	t.Fatal("work items keep coming")
}

// runTicket runs g to completion through the approval event and returns its history.
func runTicket(t *testing.T, g durable.Graph) (engine.Run, []engine.HistoryEvent) {
	t.Helper()
	reg := durable.NewRegistry()
	must(t, reg.Register(g))
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	q := memory.NewQueue(memory.WithClock(clock))
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(memory.WithClock(clock)), Queue: q, Payloads: memory.NewPayloadStore(), Clock: clock})
	must(t, err)
	_, err = eng.StartRun(t.Context(), engine.StartRunRequest{GraphName: "tickets", InstanceID: "r1", Input: json.RawMessage(`{"subject":"refund"}`)})
	must(t, err)
	runToQuiet(t, eng, q)
	must(t, eng.RaiseEvent(t.Context(), "r1", "approval", json.RawMessage(`{"approved":true,"reviewer":"ann"}`)))
	runToQuiet(t, eng, q)
	run, err := eng.GetRun(t.Context(), "r1")
	must(t, err)
	h, err := eng.History(t.Context(), "r1", "", 1000)
	must(t, err)
	return run, h.Events
}

func TestTypedHandlers_SameHistoryAndHashAsMapTwin(t *testing.T) {
	t.Parallel()
	typed, mapped := buildTyped(t), buildMap(t)
	if typed.Manifest().GraphHash != mapped.Manifest().GraphHash {
		t.Fatalf("hash typed %s != map %s", typed.Manifest().GraphHash, mapped.Manifest().GraphHash)
	}
	tr, th := runTicket(t, typed)
	mr, mh := runTicket(t, mapped)
	if tr.RuntimeStatus != engine.StatusCompleted || mr.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("status typed %s, map %s; want Completed", tr.RuntimeStatus, mr.RuntimeStatus)
	}
	if string(tr.Output) != string(mr.Output) {
		t.Fatalf("output typed %s\nmap %s", tr.Output, mr.Output)
	}
	if !strings.Contains(string(tr.Output), `"status":"closed by ann"`) {
		t.Fatalf("output %s lacks the final status", tr.Output)
	}
	if len(th) != len(mh) || len(th) < 5 {
		t.Fatalf("history lengths typed %d, map %d", len(th), len(mh))
	}
	for i := range th {
		a, b := th[i], mh[i]
		if a.Type != b.Type || a.Name != b.Name || a.Node != b.Node || string(a.Data) != string(b.Data) || !a.Timestamp.Equal(b.Timestamp) {
			t.Fatalf("history row %d differs:\ntyped %+v %s\nmap   %+v %s", i, a, a.Data, b, b.Data)
		}
	}
}

func TestAddStep_DefaultNamesAreTheNodes(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[ticket]("names")
	b.SetEntrypoint("open")
	must(t, b.AddStep("open", openTyped, durable.WithDecide(routeTyped)))
	must(t, b.AddStep("close", closeTyped, durable.Terminal()))
	g, err := b.Build()
	must(t, err)
	m := g.Manifest()
	if got, want := m.Nodes[0].HandlerName, "node:open"; got != want {
		t.Fatalf("handler name %q, want %q", got, want)
	}
	if got, want := m.Nodes[0].RouteHandlerName, "route:open"; got != want {
		t.Fatalf("route name %q, want %q", got, want)
	}
	// Two different typed functions under one name are refused, as for AddNode.
	err = b.AddStep("other", closeTyped, durable.WithHandlerName("node:open"))
	if !errors.Is(err, durable.ErrInvalidGraph) || !strings.Contains(err.Error(), "already registered to a different callable") {
		t.Fatalf("AddStep with a taken name: %v", err)
	}
}

func TestUpdate_UnknownKeyFailsTheRunNamingIt(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[ticket]("typo")
	b.SetEntrypoint("set")
	must(t, b.AddNode("set", func(context.Context, ticket) (any, error) {
		return durable.Update{"stauts": "open"}, nil
	}, durable.Terminal()))
	g, err := b.Build()
	must(t, err)
	reg := durable.NewRegistry()
	must(t, reg.Register(g))
	q := memory.NewQueue()
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: q, Payloads: memory.NewPayloadStore()})
	must(t, err)
	_, err = eng.StartRun(t.Context(), engine.StartRunRequest{GraphName: "typo", InstanceID: "r", Input: json.RawMessage(`{"subject":"s"}`)})
	must(t, err)
	runToQuiet(t, eng, q)
	run, err := eng.GetRun(t.Context(), "r")
	must(t, err)
	if run.RuntimeStatus != engine.StatusFailed || !strings.Contains(string(run.Output), "field 'stauts': unknown field in update") {
		t.Fatalf("run %s output %s; want Failed naming 'stauts'", run.RuntimeStatus, run.Output)
	}
}

func TestOnEvent_BadPayloadFailsTheRun(t *testing.T) {
	t.Parallel()
	g := buildTyped(t)
	_, err := g.ApplyEvent(t.Context(), "approval", json.RawMessage(`{"subject":"s"}`), json.RawMessage(`{"approved":"yes"}`))
	if err == nil || !strings.HasPrefix(err.Error(), "decode payload of event 'approval': ") {
		t.Fatalf("ApplyEvent with a bad payload: %v", err)
	}
	got, err := g.ApplyEvent(t.Context(), "approval", json.RawMessage(`{"subject":"s"}`), json.RawMessage(`null`))
	if err != nil || !strings.Contains(string(got), `"approved":false`) {
		t.Fatalf("ApplyEvent with null: %s, %v", got, err)
	}
}

func ExampleManifestBuilder_AddStep() {
	type Order struct {
		Item   string `json:"item"`
		Status string `json:"status"`
	}
	b := durable.NewManifestBuilder[Order]("orders")
	b.SetEntrypoint("accept")
	_ = b.AddStep("accept", func(_ context.Context, o Order) (Order, error) {
		o.Status = "accepted"
		return o, nil
	}, durable.WithHandlerName("orders.accept"), durable.Terminal())
	g, _ := b.Build()
	out, _ := g.ExecuteNode(context.Background(), "accept", json.RawMessage(`{"item":"tea"}`))
	fmt.Println(string(out))
	// Output: {"item":"tea","status":"accepted"}
}

func ExampleOnEvent() {
	type Doc struct {
		Approved bool `json:"approved"`
	}
	type Approval struct {
		OK bool `json:"ok"`
	}
	b := durable.NewManifestBuilder[Doc]("docs")
	b.SetEntrypoint("review")
	_ = b.AddStep("review", func(_ context.Context, d Doc) (Doc, error) { return d, nil },
		durable.WithHandlerName("docs.review"), durable.Terminal())
	_ = durable.OnEvent(b, "approval", func(_ context.Context, d Doc, a Approval) (Doc, error) {
		d.Approved = a.OK
		return d, nil
	})
	g, _ := b.Build()
	out, _ := g.ApplyEvent(context.Background(), "approval", json.RawMessage(`{}`), json.RawMessage(`{"ok":true}`))
	fmt.Println(string(out))
	// Output: {"approved":true}
}

func ExampleWithDecide() {
	type Job struct {
		Done bool `json:"done"`
	}
	b := durable.NewManifestBuilder[Job]("jobs")
	b.SetEntrypoint("work")
	_ = b.AddStep("work", func(_ context.Context, j Job) (Job, error) { return j, nil },
		durable.WithHandlerName("jobs.work"), durable.WithRouteName("jobs.route"),
		durable.WithDecide(func(_ context.Context, j Job) (durable.RouteDecision, error) {
			if j.Done {
				return durable.Complete("done"), nil
			}
			return durable.WaitForEvent("finished", "work"), nil
		}))
	g, _ := b.Build()
	d, _ := g.ResolveRoute(context.Background(), "work", json.RawMessage(`{"done":false}`))
	fmt.Println(d.Action, d.EventName)
	// Output: wait_for_event finished
}
