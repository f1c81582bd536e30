//go:build integration

package azurefaults_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// rig is an engine on Azurite's table, queue and blob services, each behind a faultproxy.
type rig struct {
	e        *engine.Engine
	store    *tablestore.Store
	queue    *queuestore.Queue
	payloads *blobstore.Payloads
	proxies  *faultproxy.Set
}

// wrappers put test doubles between the engine and the Azure backends (nil: none).
type wrappers struct {
	store    func(engine.Store) engine.Store
	queue    func(engine.WorkQueue) engine.WorkQueue
	payloads func(engine.PayloadStore) engine.PayloadStore
}

// newRig creates a table, queue and container of the test's own behind a proxy set (seeded
// by the test's name) and an engine on them, with the SDK's default client options (so its
// default retries) and the example graphs.
func newRig(t *testing.T, opts engine.Options) *rig {
	t.Helper()
	return newRigWrapped(t, opts, wrappers{})
}

// newRigWrapped is newRig with w between the engine and the backends.
func newRigWrapped(t *testing.T, opts engine.Options, w wrappers) *rig {
	t.Helper()
	proxies, err := faultproxy.StartSet(azuritetest.ConnectionString(t), &faultproxy.Options{Seed: seedOf(t.Name()), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxies.Close() })
	clients, err := azure.NewClients(azure.Settings{ConnectionString: proxies.ConnectionString()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, queueName := azuritetest.UniqueName("amb"), azuritetest.UniqueName("amb-")
	r := &rig{proxies: proxies}
	if r.store, err = tablestore.Open(ctx, clients, table); err != nil {
		t.Fatal(err)
	}
	if r.queue, err = queuestore.Open(ctx, clients, queueName); err != nil {
		t.Fatal(err)
	}
	if r.payloads, err = blobstore.Open(ctx, clients, queueName); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = clients.Tables.DeleteTable(ctx, table, nil)
		_, _ = clients.Queues.DeleteQueue(ctx, queueName, nil)
		_, _ = clients.Blobs.DeleteContainer(ctx, queueName, nil)
	})
	reg := durable.NewRegistry()
	gs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	opts.Registry, opts.Store, opts.Queue, opts.Payloads = reg, r.store, r.queue, r.payloads
	if w.store != nil {
		opts.Store = w.store(r.store)
	}
	if w.queue != nil {
		opts.Queue = w.queue(r.queue)
	}
	if w.payloads != nil {
		opts.Payloads = w.payloads(r.payloads)
	}
	opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if r.e, err = engine.New(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.e.Close() })
	return r
}

func seedOf(name string) uint64 {
	var h uint64 = 14695981039346656037
	for i := range len(name) {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return h
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// drive handles the queue's work items until it is empty, deleting each item handled.
func (r *rig) drive(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	for range 200 {
		msgs, err := r.queue.Receive(ctx, 1, time.Minute)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(msgs) == 0 {
			return
		}
		if err := r.e.HandleWorkItem(ctx, msgs[0].Body, msgs[0].DequeueCount); err != nil {
			t.Fatalf("HandleWorkItem: %v", err)
		}
		if err := r.queue.Delete(ctx, msgs[0]); err != nil && !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("delete work item: %v", err)
		}
	}
	t.Fatal("the queue never drained")
}

func (r *rig) start(t *testing.T, graph, id, input string) string {
	t.Helper()
	run, err := r.e.StartRun(t.Context(), engine.StartRunRequest{GraphName: graph, InstanceID: id, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("StartRun(%s): %v", graph, err)
	}
	return run.InstanceID
}

// history returns the run's history as "type:node", checking the sequence has no gap.
func (r *rig) history(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	tok := ""
	for {
		page, err := r.e.History(t.Context(), id, tok, 100)
		if err != nil {
			t.Fatalf("History(%s): %v", id, err)
		}
		for _, ev := range page.Events {
			if ev.Sequence != int64(len(out)+1) {
				t.Fatalf("history row %d has sequence %d", len(out)+1, ev.Sequence)
			}
			out = append(out, ev.Type+":"+ev.Node)
		}
		if tok = page.ContinuationToken; tok == "" {
			return out
		}
	}
}

// count returns how many history rows have type typ.
func count(rows []string, typ string) int {
	n := 0
	for _, row := range rows {
		if strings.HasPrefix(row, typ+":") {
			n++
		}
	}
	return n
}

// assertRun checks the run's status and returns it.
func (r *rig) assertRun(t *testing.T, id string, want engine.RunStatus) engine.Run {
	t.Helper()
	run, err := r.e.GetRun(t.Context(), id)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	if run.RuntimeStatus != want {
		t.Fatalf("run %s is %s (output %s), want %s", id, run.RuntimeStatus, run.Output, want)
	}
	return run
}

// assertNoOrphans checks the run's index and repair rows (enginetest.CheckNoOrphanRows).
func (r *rig) assertNoOrphans(t *testing.T, id string) {
	t.Helper()
	enginetest.CheckNoOrphanRows(t, r.store, r.e, id)
}

// fired fails the test unless the rule faulted at least one request.
func fired(t *testing.T, rules ...*faultproxy.Handle) {
	t.Helper()
	for i, h := range rules {
		if h.Fired() == 0 {
			t.Fatalf("fault %d never fired: the scenario tests nothing", i)
		}
	}
}

// Kinds of table write, by what their batch carries.

// batchWith matches table batches whose body contains every part.
func batchWith(parts ...string) faultproxy.Matcher {
	ms := []faultproxy.Matcher{faultproxy.TableBatch()}
	for _, p := range parts {
		ms = append(ms, faultproxy.BodyContains(p))
	}
	return faultproxy.All(ms...)
}

// indexWrite matches writes of the run index (partitions "~…"): inserts and merges carry the
// key in their JSON, merges and deletes in their URL.
func indexWrite() faultproxy.Matcher {
	return faultproxy.All(faultproxy.TableBatch(), faultproxy.AnyOf(
		faultproxy.BodyContains(`"PartitionKey":"~`), faultproxy.BodyContains(`(PartitionKey='~`)))
}

// headDelete matches a batch deleting a run head (the purge's).
func headDelete() faultproxy.Matcher {
	return batchWith("DELETE ", ",RowKey='r')")
}
