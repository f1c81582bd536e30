//go:build integration

package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// azureEngine builds an engine on a table, queue and container of the test's own on Azurite
// (through proxies when set) with the example graphs and extra.
func azureEngine(t *testing.T, proxies *faultproxy.Set, opts engine.Options, extra ...durable.Graph) (*engine.Engine, *queuestore.Queue) {
	t.Helper()
	cs := azuritetest.ConnectionString(t)
	if proxies != nil {
		cs = proxies.ConnectionString()
	}
	clients, err := azure.NewClients(azure.Settings{ConnectionString: cs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, queueName := azuritetest.UniqueName("feed"), azuritetest.UniqueName("feed-")
	store, err := tablestore.Open(ctx, clients, table)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := queuestore.Open(ctx, clients, queueName)
	if err != nil {
		t.Fatal(err)
	}
	payloads, err := blobstore.Open(ctx, clients, queueName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = clients.Tables.DeleteTable(ctx, table, nil)
		_, _ = clients.Queues.DeleteQueue(ctx, queueName, nil)
		_, _ = clients.Blobs.DeleteContainer(ctx, queueName, nil)
	})
	reg := runsapitest.Registry(t, examples.All)
	for _, g := range extra {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	opts.Registry, opts.Store, opts.Queue, opts.Payloads, opts.Logger = reg, store, queue, payloads, funchosttest.TestLogger(t)
	eng, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return eng, queue
}

// TestIntegrationFeed_SupportAgent_BothTransports: the feed scenario of
// TestFeed_SupportAgent_BothTransports on Azure Table storage.
func TestIntegrationFeed_SupportAgent_BothTransports(t *testing.T) {
	eng, _ := azureEngine(t, nil, engine.Options{PollInterval: 50 * time.Millisecond})
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := &watchedFeeds{Engine: eng, waiting: map[string]chan struct{}{}}
	svc, err := runsapi.NewService(runsapi.Options{Runs: w, Registry: eng.Options().Registry, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range funchosttest.Transports(t, app) {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "feed")
			runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "I want a refund for invoice 42"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Waiting)
			runsapitest.CheckFeedFollowsApproval(t, tr, id, func() { <-w.signal(id) })
		})
	}
}

// TestIntegrationFeed_EmittedEvents_ExactlyOnce: on Azure storage a node's emitted events are
// stored once, those of the attempt that committed, when its commit's reply is lost (the SDK's
// retry meets the commit's own write) and when its worker died after emitting and the work
// item was delivered again.
func TestIntegrationFeed_EmittedEvents_ExactlyOnce(t *testing.T) {
	proxies, err := faultproxy.StartSet(azuritetest.ConnectionString(t), &faultproxy.Options{Seed: 34, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxies.Close() })
	type lapState struct {
		N int `json:"n"`
	}
	var execs, crashes atomic.Int32
	crashNext := make(chan context.CancelFunc, 1)
	b := durable.NewManifestBuilder[lapState]("laps")
	b.SetEntrypoint("lap")
	_ = b.AddNode("lap", func(ctx context.Context, s lapState) (any, error) {
		exec := execs.Add(1)
		if err := durable.Emit(ctx, "lap", map[string]int32{"n": int32(s.N), "exec": exec}); err != nil {
			return nil, err
		}
		select {
		case cancel := <-crashNext: // this worker dies after emitting
			crashes.Add(1)
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		default:
		}
		return durable.Update{"n": s.N + 1}, nil
	}, durable.WithRoute(func(_ context.Context, s lapState) (any, error) {
		if s.N >= 3 {
			return durable.Complete("done"), nil
		}
		return "lap", nil
	}))
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	eng, queue := azureEngine(t, proxies, engine.Options{}, g)
	// The second lap's commit loses its reply.
	lost := proxies.Table.Add(faultproxy.Rule{Name: "lap commit", Match: faultproxy.All(faultproxy.TableBatch(), faultproxy.BodyContains("node_completed")),
		Skip: 1, Times: 1, Fault: faultproxy.LoseReply})
	run, err := eng.StartRun(t.Context(), engine.StartRunRequest{GraphName: "laps", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := run.InstanceID
	ctx, cancel := context.WithCancel(t.Context())
	crashNext <- cancel // the first lap's first execution dies
	for range 100 {
		msgs, err := queue.Receive(t.Context(), 1, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			if got, _ := eng.GetRun(t.Context(), id); got.RuntimeStatus.Finished() {
				break
			}
			time.Sleep(200 * time.Millisecond) // the crashed item comes back after its visibility timeout
			continue
		}
		hctx := t.Context()
		if crashes.Load() == 0 {
			hctx = ctx
		}
		if err := eng.HandleWorkItem(hctx, msgs[0].Body, msgs[0].DequeueCount); err != nil {
			t.Logf("work item failed (redelivered): %v", err)
			continue
		}
		if err := queue.Delete(t.Context(), msgs[0]); err != nil && !errors.Is(err, engine.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if lost.Fired() == 0 || crashes.Load() != 1 {
		t.Fatalf("faults: %d lost replies, %d crashes; the scenario tests nothing", lost.Fired(), crashes.Load())
	}
	page, err := eng.Feed(t.Context(), id, engine.FeedQuery{})
	if err != nil || !page.End {
		t.Fatalf("feed %+v, %v", page, err)
	}
	var laps []string
	for _, it := range page.Items {
		if it.Type == engine.HistoryCustom {
			laps = append(laps, string(it.Data))
		}
	}
	// exec 1 died: its event is not stored; the laps that committed are execs 2, 3 and 4.
	want := []string{`{"name":"lap","data":{"exec":2,"n":0}}`, `{"name":"lap","data":{"exec":3,"n":1}}`, `{"name":"lap","data":{"exec":4,"n":2}}`}
	if got := strings.Join(laps, " "); got != strings.Join(want, " ") {
		t.Fatalf("custom items:\n%s\nwant\n%s", got, strings.Join(want, " "))
	}
}
