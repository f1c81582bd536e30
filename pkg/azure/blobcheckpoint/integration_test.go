//go:build integration

package blobcheckpoint_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobcheckpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint/checkpointtest"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

func open(t *testing.T) (*blobcheckpoint.Saver, *container.Client) {
	t.Helper()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := azuritetest.UniqueName("cp")
	s, err := blobcheckpoint.Open(t.Context(), clients, blobcheckpoint.Options{Container: name, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return s, clients.Blobs.ServiceClient().NewContainerClient(name)
}

func TestSaver_Conformance_Integration(t *testing.T) {
	checkpointtest.RunSaverTests(t, func(t *testing.T) checkpoint.Saver {
		s, _ := open(t)
		return s
	})
}

// names lists the container's blobs with their metadata (lower-cased names).
func names(t *testing.T, c *container.Client) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Metadata: true}})
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			md := map[string]string{}
			for k, v := range b.Metadata {
				md[strings.ToLower(k)] = *v
			}
			out[*b.Name] = md
		}
	}
	return out
}

func download(t *testing.T, c *container.Client, name string) string {
	t.Helper()
	resp, err := c.NewBlobClient(name).DownloadStream(t.Context(), nil)
	if err != nil {
		t.Fatalf("download %s: %v", name, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

func TestSaver_Layout_Integration(t *testing.T) {
	s, c := open(t)
	ctx := t.Context()
	cp := checkpoint.Checkpoint{ID: "c1", TS: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC),
		ChannelVersions: map[string]string{"messages": "v1", "gone": "v0"}, Metadata: json.RawMessage(`{"step":1}`)}
	values := map[string]checkpoint.Value{"messages": {SerdeType: "json", Data: []byte(`[]`)}, "gone": {SerdeType: checkpoint.SerdeEmpty}}
	if err := s.Put(ctx, "t/1", "", cp, values); err != nil {
		t.Fatal(err)
	}
	cp2 := checkpoint.Checkpoint{ID: "c2", ParentID: "c1", ChannelVersions: map[string]string{"messages": "v1"}}
	if err := s.Put(ctx, "t/1", "sub", cp2, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, checkpoint.Ref{ThreadID: "t/1", ID: "c1"}, []checkpoint.Write{
		{TaskID: "task 1", TaskPath: "p", Channel: "ch", Idx: 0, Value: checkpoint.Value{SerdeType: "json", Data: []byte(`1`)}}}); err != nil {
		t.Fatal(err)
	}
	got := names(t, c)
	want := map[string]map[string]string{
		"threads/t%2F1/ns//checkpoints/c1/checkpoint.bin":        {"serde_type": "json", "parent_id": ""},
		"threads/t%2F1/ns//checkpoints/c1/metadata.bin":          {"serde_type": "json"},
		"threads/t%2F1/ns//checkpoints/c1/writes/task%201/0.bin": {"serde_type": "json", "channel": "ch", "task_id": "task%201", "task_path": "p"},
		"threads/t%2F1/ns//values/messages/v1.bin":               {"serde_type": "json"},
		"threads/t%2F1/ns//values/gone/v0.bin":                   {"serde_type": "empty"},
		"threads/t%2F1/ns//latest.json":                          {"serde_type": "json"},
		"threads/t%2F1/ns/sub/checkpoints/c2/checkpoint.bin":     {"serde_type": "json", "parent_id": "c1"},
		"threads/t%2F1/ns/sub/checkpoints/c2/metadata.bin":       {"serde_type": "json"},
		"threads/t%2F1/ns/sub/latest.json":                       {"serde_type": "json"},
	}
	for name, md := range want {
		have, ok := got[name]
		if !ok {
			t.Errorf("missing blob %s; have %v", name, slices.Sorted(mapsKeys(got)))
			continue
		}
		for k, v := range md {
			if have[k] != v {
				t.Errorf("%s metadata %s = %q; want %q", name, k, have[k], v)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("blobs = %v; want exactly %d", slices.Sorted(mapsKeys(got)), len(want))
	}
	if l := download(t, c, "threads/t%2F1/ns//latest.json"); l != `{"checkpoint_id":"c1"}` {
		t.Errorf("latest.json = %s", l)
	}
	if v := download(t, c, "threads/t%2F1/ns//values/gone/v0.bin"); v != "" {
		t.Errorf("empty channel body = %q; want empty", v)
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestSaver_GetWithoutHintScansPrefix_Integration(t *testing.T) {
	s, c := open(t)
	ctx := t.Context()
	for _, id := range []string{"c1", "c3", "c2"} {
		if err := s.Put(ctx, "t1", "", checkpoint.Checkpoint{ID: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// An uncommitted checkpoint (metadata written, checkpoint.bin not) is never returned.
	if _, err := c.NewBlockBlobClient("threads/t1/ns//checkpoints/c9/metadata.bin").UploadBuffer(ctx, []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewBlobClient("threads/t1/ns//latest.json").Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t1"})
	if err != nil || tp.Checkpoint.ID != "c3" {
		t.Fatalf("Get latest without the hint = %v, %v; want c3", tp.Checkpoint.ID, err)
	}
	// A hint naming a deleted checkpoint falls back to the scan too.
	if _, err := s.DeleteBefore(ctx, checkpoint.Ref{ThreadID: "t1", ID: "c2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewBlockBlobClient("threads/t1/ns//latest.json").UploadBuffer(ctx, []byte(`{"checkpoint_id":"c1"}`), nil); err != nil {
		t.Fatal(err)
	}
	tp, err = s.Get(ctx, checkpoint.Ref{ThreadID: "t1"})
	if err != nil || tp.Checkpoint.ID != "c3" {
		t.Fatalf("Get latest with a stale hint = %v, %v; want c3", tp.Checkpoint.ID, err)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t1", ID: "c9"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("Get(uncommitted) = %v; want ErrNotFound", err)
	}
}
