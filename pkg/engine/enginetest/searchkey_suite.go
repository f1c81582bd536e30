package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// caseState is the state of the graph "cases" of RunSearchKeyTests.
type caseState struct {
	Ticket   string `json:"ticket"`
	Customer string `json:"customer"`
	Approved bool   `json:"approved"`
}

// caseGraph builds the graph "cases": it declares the search key "ticket" and waits for the
// event "go" unless its input is approved.
func caseGraph(t testing.TB) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[caseState]("cases")
	b.SetEntrypoint("open")
	open := func(context.Context, caseState) (any, error) { return nil, nil }
	wait := func(_ context.Context, s caseState) (any, error) {
		if s.Approved {
			return "close", nil
		}
		return durable.WaitForEvent("go", "close"), nil
	}
	errs := []error{
		b.SearchKeys("ticket"),
		b.AddNode("open", open, durable.WithHandlerName("cases.open"), durable.WithRoute(wait), durable.WithRouteName("cases.wait")),
		b.AddNode("close", open, durable.WithHandlerName("cases.close"), durable.Terminal()),
		b.AddEventHandler("go", func(context.Context, caseState, json.RawMessage) (any, error) {
			return durable.Update{"approved": true}, nil
		}),
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// RunSearchKeyTests runs the conformance suite of search keys (engine.RunQuery.Keys) on an
// engine over the store newStore returns, counting its operations: runs started with a key,
// declared by the graph or given at the start, are listed by it newest first, page by page,
// with the listing's other filters, each page one query of the key's partition plus a head
// read per run whatever the number of other runs; a finished run is listed by its status, a
// purged one no more, and no index row of it is left; keys the engine cannot index are
// refused before anything is stored. Every Store must pass it; it reads the whole table once,
// so give it a table of its own or a small one.
func RunSearchKeyTests(t *testing.T, newStore func(t *testing.T) engine.Store) {
	t.Helper()
	counts := &OpCounts{}
	store := newStore(t)
	reg := durable.NewRegistry()
	if err := reg.Register(caseGraph(t)); err != nil {
		t.Fatal(err)
	}
	queue := memory.NewQueue()
	e, err := engine.New(engine.Options{Registry: reg, Queue: queue, Payloads: memory.NewPayloadStore(),
		Store: CountingStore{Store: store, Counts: counts}, Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	prefix := UniqueKey("sk") // runs and key values of their own, on a shared table too
	ticket := prefix + "-T-1"
	start := func(id, input string, keys map[string]string) {
		t.Helper()
		if _, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "cases", InstanceID: prefix + id, Input: []byte(input), SearchKeys: keys}); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
		time.Sleep(time.Millisecond) // distinct creation times at the index's precision
	}
	for i := range 20 {
		start(fmt.Sprintf("-other-%02d", i), fmt.Sprintf(`{"ticket":"%s-T-%d"}`, prefix, 100+i), nil)
		switch i {
		case 4:
			start("-a", fmt.Sprintf(`{"ticket":%q}`, ticket), nil) // declared: from the input
		case 9:
			start("-b", `{"ticket":"elsewhere","approved":true}`, map[string]string{"ticket": ticket, "customer": prefix + "-c"}) // given: replaces the input's
		case 14:
			start("-c", fmt.Sprintf(`{"ticket":%q}`, ticket), map[string]string{"customer": prefix + "-c"})
		}
	}
	drive(t, e, queue)
	const keyRuns = 3 // the runs with ticket
	list := func(q engine.RunQuery) []string {
		t.Helper()
		var ids []string
		for {
			counts.Reset()
			page, err := e.ListRuns(ctx, q)
			if err != nil {
				t.Fatalf("list %+v: %v", q, err)
			}
			for _, r := range page.Runs {
				ids = append(ids, strings.TrimPrefix(r.InstanceID, prefix))
			}
			// A head read per run listed; a finished-status filter also reads the heads of
			// the key's unfinished runs (their rows may lag the finishing commit), never more
			// than the key's runs.
			if g, n, w := counts.Gets.Load(), counts.Queries.Load(), counts.Submits.Load(); n != 1 || g < int64(len(page.Runs)) || g > keyRuns || w != 0 {
				t.Errorf("list %+v: a page of %d runs cost %d queries, %d reads, %d writes; want 1 query, %d to %d reads, no write", q, len(page.Runs), n, g, w, len(page.Runs), keyRuns)
			}
			if q.ContinuationToken = page.ContinuationToken; q.ContinuationToken == "" {
				return ids
			}
		}
	}
	customer := prefix + "-c"
	for _, tt := range []struct {
		name string
		q    engine.RunQuery
		want []string
	}{
		{"by ticket", engine.RunQuery{Keys: map[string]string{"ticket": ticket}}, []string{"-c", "-b", "-a"}},
		{"by ticket, a page of 1", engine.RunQuery{Keys: map[string]string{"ticket": ticket}, Limit: 1}, []string{"-c", "-b", "-a"}},
		{"by ticket, running", engine.RunQuery{Keys: map[string]string{"ticket": ticket}, Status: engine.StatusRunning}, []string{"-c", "-a"}},
		{"by ticket, completed", engine.RunQuery{Keys: map[string]string{"ticket": ticket}, Status: engine.StatusCompleted}, []string{"-b"}},
		{"by ticket and graph", engine.RunQuery{Keys: map[string]string{"ticket": ticket}, GraphName: "cases"}, []string{"-c", "-b", "-a"}},
		{"by ticket, another graph", engine.RunQuery{Keys: map[string]string{"ticket": ticket}, GraphName: "nothing"}, nil},
		{"by customer", engine.RunQuery{Keys: map[string]string{"customer": customer}}, []string{"-c", "-b"}},
		{"by ticket and customer", engine.RunQuery{Keys: map[string]string{"ticket": ticket, "customer": customer}}, []string{"-c", "-b"}},
		{"the input's value a given key replaced", engine.RunQuery{Keys: map[string]string{"ticket": "elsewhere"}}, nil},
		{"a value no run has", engine.RunQuery{Keys: map[string]string{"ticket": prefix + "-none"}}, nil},
	} {
		if got := list(tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if run, err := e.GetRun(ctx, prefix+"-b"); err != nil || run.SearchKeys["ticket"] != ticket || run.SearchKeys["customer"] != customer || len(run.SearchKeys) != 2 {
		t.Errorf("run -b has search keys %v (%v)", run.SearchKeys, err)
	}
	// Bad keys are refused before anything is stored.
	for _, keys := range []map[string]string{
		{"": "x"}, {"a b": "x"}, {strings.Repeat("k", engine.MaxSearchKeyNameLength+1): "x"},
		{"k": ""}, {"k": strings.Repeat("v", engine.MaxSearchKeyValueBytes+1)}, {"k": "tab\t"},
		{"k0": "v", "k1": "v", "k2": "v", "k3": "v", "k4": "v", "k5": "v", "k6": "v", "k7": "v"}, // 8 and the declared ticket
	} {
		counts.Reset()
		_, err := e.StartRun(ctx, engine.StartRunRequest{GraphName: "cases", InstanceID: prefix + "-refused", Input: []byte(`{"ticket":"t"}`), SearchKeys: keys})
		var ske *engine.SearchKeyError
		if !errors.As(err, &ske) || !errors.Is(err, engine.ErrInvalidSearchKey) || counts.Total() != 0 {
			t.Errorf("keys %v: %v after %d operations, want a *SearchKeyError before any", keys, err, counts.Total())
		}
	}
	// A finished run is listed by its status; a purged one no more, and leaves no row.
	if err := e.RaiseEvent(ctx, prefix+"-a", "go", []byte("null")); err != nil {
		t.Fatal(err)
	}
	drive(t, e, queue)
	if got := list(engine.RunQuery{Keys: map[string]string{"ticket": ticket}, Status: engine.StatusCompleted}); !slices.Equal(got, []string{"-b", "-a"}) {
		t.Errorf("completed by ticket after the event: %v", got)
	}
	if got := list(engine.RunQuery{Keys: map[string]string{"ticket": ticket}, Unfinished: true}); !slices.Equal(got, []string{"-c"}) {
		t.Errorf("unfinished by ticket after the event: %v", got)
	}
	if err := e.PurgeRun(ctx, prefix+"-b"); err != nil {
		t.Fatal(err)
	}
	if got := list(engine.RunQuery{Keys: map[string]string{"customer": customer}}); !slices.Equal(got, []string{"-c"}) {
		t.Errorf("by customer after the purge: %v", got)
	}
	CheckNoOrphanRows(t, store, e, prefix+"-b")
}

// drive hands every visible work item of queue to e until none is left.
func drive(t *testing.T, e *engine.Engine, queue *memory.Queue) {
	t.Helper()
	for range 10000 {
		msgs, err := queue.Receive(t.Context(), engine.MaxReceive, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		for _, m := range msgs {
			if err := e.HandleWorkItem(t.Context(), m.Body, m.DequeueCount); err != nil {
				t.Fatal(err)
			}
			if err := queue.Delete(t.Context(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("the queue does not drain")
}
