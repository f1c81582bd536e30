//go:build integration

package launch_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

type growState struct {
	Chunks []string `json:"chunks"`
}

// growGraph appends a 300 KiB chunk per step for five steps: its state passes 1 MiB.
func growGraph(t *testing.T) *durable.Registry {
	t.Helper()
	b := durable.NewManifestBuilder[growState]("grow")
	b.SetEntrypoint("add")
	chunk := strings.Repeat("x", 300<<10)
	err := b.AddNode("add", func(_ context.Context, s growState) (any, error) {
		return durable.Update{"chunks": append(s.Chunks, chunk)}, nil
	}, durable.WithRoute(func(_ context.Context, s growState) (any, error) {
		if len(s.Chunks) >= 5 {
			return durable.Complete("grown"), nil
		}
		return durable.Next("add"), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestIntegrationDurable_LargeStateSpillsToBlobs: on the Azure backends that FromEnv picks
// for AzureWebJobsStorage, a run whose state grows past 1 MiB completes; its large values live
// in blobs and every row of its partition stays within Azure's entity limits.
func TestIntegrationDurable_LargeStateSpillsToBlobs(t *testing.T) {
	s, err := launch.FromEnv(t.Context(), envOf(map[string]string{
		launch.EnvStorage:       azuritetest.ConnectionString(t),
		launch.EnvStoragePrefix: azuritetest.UniqueName("l"),
	}), launch.ModeServe, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Durable.Azure || s.Azure == nil {
		t.Fatal("FromEnv did not pick the Azure backends")
	}
	eng, err := engine.New(s.Durable.EngineOptions(engine.Options{Registry: growGraph(t), Logger: discard()}))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.StartRun(t.Context(), engine.StartRunRequest{GraphName: "grow", InstanceID: "big"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	run, err := eng.WaitRun(ctx, "big", func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	if err != nil {
		t.Fatal(err)
	}
	if run.RuntimeStatus != engine.StatusCompleted || len(run.Output) < 1<<20 {
		t.Fatalf("run: %s with %d bytes of output, want Completed with more than 1 MiB", run.RuntimeStatus, len(run.Output))
	}
	var out struct {
		State growState `json:"state"`
	}
	if err := json.Unmarshal(run.Output, &out); err != nil || len(out.State.Chunks) != 5 {
		t.Fatalf("output: %d chunks, %v", len(out.State.Chunks), err)
	}
	blobs := 0
	pager := s.Azure.Blobs.ServiceClient().NewContainerClient(s.Names.PayloadContainer).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: ptr("big/")})
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		blobs += len(page.Segment.BlobItems)
	}
	if blobs == 0 {
		t.Error("no payload blob under big/: the large state did not spill")
	}
	page, err := s.Durable.Store.Query(t.Context(), engine.Query{PartitionKey: "big"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range page.Entities {
		if _, err := engine.ValidateEntity(ent); err != nil {
			t.Errorf("row %s breaks Azure's limits: %v", ent.RowKey, err)
		}
	}
	t.Logf("output %d bytes, %d payload blobs, %d rows", len(run.Output), blobs, len(page.Entities))
}

func ptr[T any](v T) *T { return &v }

// TestIntegrationDurable_QuotedRunIDRefusedOnAzure: on the Azure table store a run id holding a
// single quote (which aztables cannot update) is refused at start, not left stuck.
func TestIntegrationDurable_QuotedRunIDRefusedOnAzure(t *testing.T) {
	s, err := launch.FromEnv(t.Context(), envOf(map[string]string{
		launch.EnvStorage:       azuritetest.ConnectionString(t),
		launch.EnvStoragePrefix: azuritetest.UniqueName("q"),
	}), launch.ModeServe, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eng, err := engine.New(s.Durable.EngineOptions(engine.Options{Registry: growGraph(t), Logger: discard()}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.StartRun(t.Context(), engine.StartRunRequest{GraphName: "grow", InstanceID: "it's"}); !errors.Is(err, engine.ErrInvalidInstanceID) {
		t.Fatalf("err = %v, want ErrInvalidInstanceID", err)
	}
}
