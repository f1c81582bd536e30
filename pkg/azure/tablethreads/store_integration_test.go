//go:build integration

package tablethreads_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/tablethreads"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platform/threads/threadstest"
)

func TestStore_Conformance_Integration(t *testing.T) {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	threadstest.RunStoreTests(t, func(t *testing.T) threads.Store {
		s, err := tablethreads.Open(t.Context(), clients, tablethreads.Options{Table: azuritetest.UniqueName("threads"), Logger: funchosttest.TestLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestStore_ValuesSpillToBlobs_Integration: values too long for the entity live in one blob
// per thread, a replaced blob is deleted, and Delete removes the thread's blobs.
func TestStore_ValuesSpillToBlobs_Integration(t *testing.T) {
	ctx := t.Context()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	table, container := azuritetest.UniqueName("threads"), azuritetest.UniqueName("values-")
	s, err := tablethreads.Open(ctx, clients, tablethreads.Options{Table: table, Container: container, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	blobs := func() []string {
		var names []string
		pager := clients.Blobs.ServiceClient().NewContainerClient(container).NewListBlobsFlatPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range page.Segment.BlobItems {
				names = append(names, *b.Name)
			}
		}
		return names
	}
	now := time.Now()
	for _, tid := range []string{"..", "t1"} {
		if err := s.Create(ctx, threads.Thread{ThreadID: tid, CreatedAt: now, UpdatedAt: now, Status: threads.StatusIdle}); err != nil {
			t.Fatal(err)
		}
	}
	large := func(c string) json.RawMessage { return json.RawMessage(`"` + strings.Repeat(c, 400_000) + `"`) }
	for _, v := range []json.RawMessage{large("a"), large("b")} {
		if err := s.Release(ctx, "..", threads.StatusIdle, v, now); err != nil {
			t.Fatal(err)
		}
	}
	if got := blobs(); len(got) != 1 || !strings.HasPrefix(got[0], "threads/%2E%2E/values-") {
		t.Fatalf("blobs after two large writes: %v, want one under threads/%%2E%%2E/", got)
	}
	if got, err := s.Get(ctx, ".."); err != nil || string(got.Values) != string(large("b")) {
		t.Fatalf("Get: %d bytes, %v", len(got.Values), err)
	}
	if err := s.Release(ctx, "..", threads.StatusIdle, json.RawMessage(`{}`), now); err != nil {
		t.Fatal(err)
	}
	if got := blobs(); len(got) != 0 {
		t.Fatalf("blobs after small values replaced large ones: %v", got)
	}
	if err := s.Release(ctx, "t1", threads.StatusIdle, large("c"), now); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if got := blobs(); len(got) != 0 {
		t.Fatalf("blobs after Delete: %v", got)
	}
}
