//go:build integration

package blobstore_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// deleteCounter is a reverse proxy in front of the blob service that counts the DELETE
// requests in flight at once.
type deleteCounter struct {
	mu             sync.Mutex
	inFlight, peak int
	total          int
}

func (c *deleteCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			next.ServeHTTP(w, r)
			return
		}
		c.mu.Lock()
		c.inFlight++
		c.total++
		c.peak = max(c.peak, c.inFlight)
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.inFlight--
			c.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// Issue #32, finding 8: purging a run's payloads deletes its blobs with bounded parallelism,
// not one after another — more than one delete in flight, never more than 16.
func TestIntegrationPayloads_DeletePrefix_BoundedParallelism(t *testing.T) {
	t.Parallel()
	conn := azuritetest.ConnectionString(t)
	endpoint := regexp.MustCompile(`BlobEndpoint=([^;]+)`).FindStringSubmatch(conn)
	if endpoint == nil {
		t.Fatalf("no BlobEndpoint in the test connection string")
	}
	upstream, err := url.Parse(endpoint[1])
	if err != nil {
		t.Fatal(err)
	}
	counter := &deleteCounter{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: upstream.Scheme, Host: upstream.Host})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: counter.wrap(proxy)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	proxied := regexp.MustCompile(`BlobEndpoint=[^;]+`).ReplaceAllLiteralString(conn,
		"BlobEndpoint=http://"+ln.Addr().String()+upstream.Path)
	clients, err := azure.NewClients(azure.Settings{ConnectionString: proxied}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := clients.EnsureContainer(t.Context(), azuritetest.UniqueName("purge-"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Delete(t.Context(), nil) })
	p := blobstore.New(c)
	const blobs = 200
	for i := range blobs {
		if err := p.Put(t.Context(), fmt.Sprintf("run/nonce/%04d.json", i), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := p.DeletePrefix(t.Context(), "run/")
	if err != nil || n != blobs {
		t.Fatalf("DeletePrefix: %d deleted, %v; want %d", n, err, blobs)
	}
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if counter.total != blobs {
		t.Fatalf("%d deletes reached the service, want %d", counter.total, blobs)
	}
	if counter.peak < 2 || counter.peak > 16 {
		t.Fatalf("at most %d deletes were in flight at once, want between 2 and 16", counter.peak)
	}
	t.Logf("%d blobs deleted, at most %d at once", blobs, counter.peak)
}
