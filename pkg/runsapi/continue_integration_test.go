//go:build integration

package runsapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestIntegrationContinueAsNew_FeedFollows: on Azure Table storage, a run that continues as new
// three times is followed through the runs API's feed across every generation (the scenario
// of TestContinueAsNew_FeedFollows_BothTransports), and its purge leaves no row of any
// generation.
func TestIntegrationContinueAsNew_FeedFollows(t *testing.T) {
	eng, _ := azureEngine(t, nil, engine.Options{PollInterval: 50 * time.Millisecond}, cycleGraph(t))
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: eng.Options().Registry, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range funchosttest.Transports(t, app) {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "cycle")
			checkFeedFollowsContinues(t, tr, id)
			runsapitest.Call(t, tr, "DELETE", "/api/runs/"+id, "").Expect(t, "purge", 200, `{"instance_id": "`+id+`", "purged": true}`)
			page, err := eng.Options().Store.Query(t.Context(), engine.Query{PartitionKey: id})
			if err != nil || len(page.Entities) != 0 {
				t.Fatalf("after the purge: %d rows (%v)", len(page.Entities), err)
			}
		})
	}
}

// TestIntegrationContinueAsNew_LostReply_ContinuesOnce: on Azure Table storage, the batch of a
// continue-as-new whose reply is lost (the table applied it; the SDK's retry meets its own
// write) is settled by reading it back: the run continues once per visit, keeps two
// generations of rows, and completes in generation 3.
func TestIntegrationContinueAsNew_LostReply_ContinuesOnce(t *testing.T) {
	proxies, err := faultproxy.StartSet(azuritetest.ConnectionString(t), &faultproxy.Options{Seed: 43, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxies.Close() })
	eng, _ := azureEngine(t, proxies, engine.Options{PollInterval: 50 * time.Millisecond}, cycleGraph(t))
	lost := proxies.Table.Add(faultproxy.Rule{Name: "continue commit", Match: faultproxy.All(faultproxy.TableBatch(), faultproxy.BodyContains("continued_as_new")),
		Skip: 1, Times: 1, Fault: faultproxy.LoseReply})
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: eng.Options().Registry, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	tr := funchosttest.Transports(t, app)[0]
	checkFeedFollowsContinues(t, tr, runsapitest.UniqueID(tr, "cycle-lost"))
	if lost.Fired() != 1 {
		t.Fatalf("the lost reply fired %d times; the scenario tests nothing", lost.Fired())
	}
}
