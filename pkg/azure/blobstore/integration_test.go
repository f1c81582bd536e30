//go:build integration

package blobstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// newContainer creates a fresh container on Azurite and deletes it when the test ends.
func newContainer(t testing.TB) *container.Client {
	t.Helper()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clients.EnsureContainer(t.Context(), azuritetest.UniqueName("payloads-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), nil) })
	return c
}

func TestIntegrationPayloads_Conformance(t *testing.T) {
	t.Parallel()
	p := blobstore.New(newContainer(t))
	enginetest.RunPayloadStoreTests(t, func(*testing.T) engine.PayloadStore { return p })
}

func TestIntegrationPayloads_KeysAndSizes(t *testing.T) {
	t.Parallel()
	p := blobstore.New(newContainer(t))
	ctx := t.Context()
	run := enginetest.UniqueKey("run 'x'%20é")
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16) // 3 MiB: larger than one table entity
	keys := map[string][]byte{run + "/1/state": big, run + "/1/a b%2Fc": []byte("odd"), run + "/2/😀": []byte("emoji")}
	for k, v := range keys {
		if err := p.Put(ctx, k, v); err != nil {
			t.Fatalf("Put %q: %v", k, err)
		}
	}
	for k, v := range keys {
		got, err := p.Get(ctx, k)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("Get %q: %d bytes, %v", k, len(got), err)
		}
	}
	for _, bad := range []string{"a\\b", "run/x.", "run/x/", "a\x01b", "../x.json", "run/./x.json", strings.Repeat("k", engine.MaxPayloadKeyLength+1)} {
		if err := p.Put(ctx, bad, []byte("x")); !errors.Is(err, engine.ErrInvalidEntity) {
			t.Errorf("Put %q: err = %v, want ErrInvalidEntity", bad, err)
		}
	}
	if err := p.Put(ctx, strings.Repeat("k", engine.MaxPayloadKeyLength), []byte("x")); err != nil {
		t.Errorf("key of %d characters: %v", engine.MaxPayloadKeyLength, err)
	}
	n, err := p.DeletePrefix(ctx, run+"/")
	if err != nil || n != len(keys) {
		t.Fatalf("DeletePrefix = %d, %v; want %d", n, err, len(keys))
	}
}

// DeletePrefix deletes every payload of a run across generations, and a second call finds
// nothing.
func TestIntegrationPayloads_DeletePrefix_ManyBlobs(t *testing.T) {
	t.Parallel()
	p := blobstore.New(newContainer(t))
	run := enginetest.UniqueKey("many")
	const n = 120
	for i := range n {
		if err := p.Put(t.Context(), fmt.Sprintf("%s/%d/p%03d", run, i%3, i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.DeletePrefix(t.Context(), run+"/")
	if err != nil || got != n {
		t.Fatalf("DeletePrefix = %d, %v; want %d", got, err, n)
	}
	if again, err := p.DeletePrefix(t.Context(), run+"/"); err != nil || again != 0 {
		t.Fatalf("second DeletePrefix = %d, %v", again, err)
	}
}
