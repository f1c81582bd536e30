package tickets_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/examples/tickets"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// newEngine is an in-memory engine with the example graphs, its dispatcher running.
func newEngine(t *testing.T) *engine.Engine {
	t.Helper()
	reg := durable.NewRegistry()
	graphs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range graphs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return eng
}

// crashAfterFirstStart is the engine, but the first start's invocation fails once the run
// it stored has finished, as a worker that died after the start landed: the host delivers
// the message again. It records what every start answered.
type crashAfterFirstStart struct {
	*engine.Engine
	mu      sync.Mutex
	answers []error
}

func (c *crashAfterFirstStart) StartRun(ctx context.Context, req engine.StartRunRequest) (engine.Run, error) {
	run, err := c.Engine.StartRun(ctx, req)
	c.mu.Lock()
	c.answers = append(c.answers, err)
	first := len(c.answers) == 1
	c.mu.Unlock()
	if first && err == nil {
		if _, werr := c.Engine.WaitRun(ctx, run.InstanceID, nil); werr != nil {
			return run, werr
		}
		return run, errors.New("the worker died after the start was stored")
	}
	return run, err
}

// TestTickets_MessageStartsATriageRun_RedeliveryStartsNoSecond: under the emulated host, a
// message on the tickets queue starts a content_classifier run with the message as its
// input and the message's id in its instance id; the invocation fails after the run was
// stored and finished, the host delivers the message again, and the second delivery starts
// nothing: one run, its history as it was, the message done with.
func TestTickets_MessageStartsATriageRun_RedeliveryStartsNoSecond(t *testing.T) {
	eng := newEngine(t)
	runs := &crashAfterFirstStart{Engine: eng}
	app := funchost.NewFunctionApp()
	if err := tickets.Register(app, tickets.Options{Runs: runs, QueueName: "tickets", Logger: funchosttest.TestLogger(t)}); err != nil {
		t.Fatal(err)
	}
	e := funchosttest.StartApp(t, app, funchosttest.Options{Logf: t.Logf})
	e.EnqueueBase64("tickets", `{"ticket_id": "T-7", "text": "My order arrived broken and I am angry"}`)
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	var exists *engine.RunExistsError
	if len(runs.answers) != 2 || runs.answers[0] != nil || !errors.As(runs.answers[1], &exists) || exists.Status != engine.StatusCompleted {
		t.Fatalf("starts answered %v: want the first stored, the redelivery's refused (the run exists, Completed)", runs.answers)
	}
	list, err := eng.ListRuns(t.Context(), engine.RunQuery{GraphName: tickets.DefaultGraph})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != 1 || !strings.HasPrefix(list.Runs[0].InstanceID, tickets.InstancePrefix) || list.Runs[0].InstanceID != exists.InstanceID {
		t.Fatalf("runs %+v: want the one run of the message", list.Runs)
	}
	run, err := eng.GetRun(t.Context(), exists.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.DecodeOutput[examples.ContentState](run)
	if err != nil || out.State.Category == nil || *out.State.Category != "complaint" {
		t.Fatalf("output %+v, %v", out, err)
	}
	var meta map[string]string
	if err := json.Unmarshal(run.Input.Metadata, &meta); err != nil || meta["trigger"] != "queue" || meta["queue"] != "tickets" || tickets.InstanceID(meta["message_id"]) != run.InstanceID {
		t.Fatalf("metadata %s (%v)", run.Input.Metadata, err)
	}
	h, err := eng.History(t.Context(), run.InstanceID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for _, ev := range h.Events {
		if ev.Type == engine.HistoryRunStarted {
			started++
		}
	}
	if started != 1 || h.Events[len(h.Events)-1].Type != engine.HistoryRunCompleted {
		t.Fatalf("history %+v: want one start, ending completed", h.Events)
	}
	if left := e.Queue("tickets"); len(left) != 0 || len(e.Queue("tickets-poison")) != 0 {
		t.Fatalf("queue %v, poison %v: want the message done with", left, e.Queue("tickets-poison"))
	}
}

// TestTickets_AMessageTheGraphRefuses_EndsInThePoisonQueue: a message that is not a start
// the graph accepts fails every delivery and ends in tickets-poison, starting nothing.
func TestTickets_AMessageTheGraphRefuses_EndsInThePoisonQueue(t *testing.T) {
	eng := newEngine(t)
	app := funchost.NewFunctionApp()
	if err := tickets.Register(app, tickets.Options{Runs: eng, QueueName: "tickets", Logger: funchosttest.TestLogger(t)}); err != nil {
		t.Fatal(err)
	}
	e := funchosttest.StartApp(t, app, funchosttest.Options{Logf: t.Logf})
	e.EnqueueBase64("tickets", `{"subject": "no text"}`)
	e.EnqueueBase64("tickets", `["not", "an", "object"]`)
	if err := e.DrainQueues(t.Context()); err != nil {
		t.Fatal(err)
	}
	if poison := e.QueueContents("tickets-poison"); len(poison) != 2 || len(e.Queue("tickets")) != 0 {
		t.Fatalf("poison %v, queue %v", poison, e.Queue("tickets"))
	}
	if list, err := eng.ListRuns(t.Context(), engine.RunQuery{}); err != nil || len(list.Runs) != 0 {
		t.Fatalf("runs %+v (%v): want none", list.Runs, err)
	}
}

func TestRegister_Validates(t *testing.T) {
	app := funchost.NewFunctionApp()
	if err := tickets.Register(app, tickets.Options{QueueName: "tickets"}); err == nil {
		t.Fatal("no Runs: want an error")
	}
	if err := tickets.Register(app, tickets.Options{Runs: newEngine(t)}); err == nil {
		t.Fatal("no queue: want an error")
	}
	if err := tickets.Register(app, tickets.Options{Runs: newEngine(t), QueueName: "tickets"}); err != nil {
		t.Fatal(err)
	}
	fns := app.QueueFunctions()
	if len(fns) != 1 || fns[0].Name != tickets.DefaultFunction || fns[0].QueueName != "tickets" {
		t.Fatalf("queue functions %+v", fns)
	}
}
