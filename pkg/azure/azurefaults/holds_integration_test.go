//go:build integration

package azurefaults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// twoEngines returns a rig whose engine and a second one (another process) share Azurite's
// table, queue and container behind one proxy set, with the SDK's retries off: a 503 the
// proxy answers is the error the engine sees.
func twoEngines(t *testing.T) (*rig, *engine.Engine) {
	t.Helper()
	proxies, err := faultproxy.StartSet(azuritetest.ConnectionString(t), &faultproxy.Options{Seed: seedOf(t.Name()), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxies.Close() })
	clients, err := azure.NewClients(azure.Settings{ConnectionString: proxies.ConnectionString()},
		&azure.Options{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, queueName := azuritetest.UniqueName("hold"), azuritetest.UniqueName("hold-")
	r := &rig{proxies: proxies}
	if r.store, err = tablestore.Open(ctx, clients, table); err != nil {
		t.Fatal(err)
	}
	if r.queue, err = queuestore.Open(ctx, clients, queueName); err != nil {
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
	newEngine := func() *engine.Engine {
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
		e, err := engine.New(engine.Options{Registry: reg, Store: r.store, Queue: r.queue, Payloads: payloads, SweepInterval: -1,
			Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	r.e = newEngine()
	return r, newEngine()
}

// releasesHold matches the batch that releases a step's hold: the head's Holder cleared, with
// no write id (a commit clears it too, stamped with its write id).
func releasesHold() faultproxy.Matcher {
	return faultproxy.All(faultproxy.TableBatch(), func(r *faultproxy.Request) bool {
		return bytes.Contains(r.Body, []byte(`"Holder":""`)) && !bytes.Contains(r.Body, []byte(`"WriteID"`))
	})
}

// Issue #32 on Azure Tables: six deliveries of a step, alternating between two engines, each
// store their hold, run the node, and meet a 503 at the step's commit and at every try of
// their release. The run is not failed as poison (MaxStepStarts is 5): each engine finds the
// other's hold within its lease, the failed handling's own. Once storage answers, the run
// completes with each visit once.
func TestIntegrationFailedHandlings_CommitAndReleaseFail_NeverPoison(t *testing.T) {
	t.Parallel()
	r, other := twoEngines(t)
	commit := r.proxies.Table.Add(faultproxy.Rule{Name: "commit", Match: batchWith("node_completed"), Fault: faultproxy.Busy})
	release := r.proxies.Table.Add(faultproxy.Rule{Name: "release", Match: releasesHold(), Fault: faultproxy.Busy})
	id := r.start(t, "data_pipeline", "", pipelineInput)
	item, err := json.Marshal(map[string]any{"v": 1, "run_id": id, "gen": 1, "step": 0})
	if err != nil {
		t.Fatal(err)
	}
	engines := []*engine.Engine{r.e, other}
	for count := int64(1); count <= 6; count++ {
		if err := engines[count%2].HandleWorkItem(t.Context(), item, count); err == nil {
			t.Fatalf("delivery %d succeeded despite the faults", count)
		}
	}
	fired(t, commit, release)
	commit.Remove()
	release.Remove()
	if err := r.e.HandleWorkItem(t.Context(), item, 7); err != nil {
		t.Fatal(err)
	}
	r.drive(t) // the start's item, now stale
	r.assertPipeline(t, id)
}
