package blobstore

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Payloads is a engine.PayloadStore on one blob container. Safe for concurrent use.
type Payloads struct {
	c *container.Client
}

var _ engine.PayloadStore = (*Payloads)(nil)

// New returns a Payloads on an existing container (azure.Clients.EnsureContainer
// creates it).
func New(c *container.Client) *Payloads {
	return &Payloads{c: c}
}

// Open returns a Payloads on the container of clients' account, creating the container if
// missing. Its error names the container (from azure.Clients.EnsureContainer).
func Open(ctx context.Context, clients *azure.Clients, containerName string) (*Payloads, error) {
	c, err := clients.EnsureContainer(ctx, containerName)
	if err != nil {
		return nil, err
	}
	return New(c), nil
}

// Put implements engine.PayloadStore.
func (p *Payloads) Put(ctx context.Context, key string, data []byte) error {
	if err := engine.CheckPayloadKey(key); err != nil {
		return fmt.Errorf("put payload: %w", err)
	}
	if len(data) > engine.MaxPayloadBytes {
		return fmt.Errorf("put payload %s: %d bytes: %w", key, len(data), engine.ErrTooLarge)
	}
	if _, err := p.c.NewBlockBlobClient(key).UploadBuffer(ctx, data, nil); err != nil {
		return fmt.Errorf("put payload %s: %w", key, classify(err))
	}
	return nil
}

// Get implements engine.PayloadStore.
func (p *Payloads) Get(ctx context.Context, key string) ([]byte, error) {
	if err := engine.CheckPayloadKey(key); err != nil {
		return nil, fmt.Errorf("get payload %s: %w", key, engine.ErrNotFound)
	}
	resp, err := p.c.NewBlobClient(key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("get payload %s: %w", key, classify(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("get payload %s: read: %w", key, classify(err))
	}
	return data, nil
}

// deleteParallel is how many blob deletes one DeletePrefix has in flight: a run with a
// thousand spilled states is purged in a thousand / deleteParallel round trips, not a thousand.
const deleteParallel = 16

// DeletePrefix implements engine.PayloadStore: it lists the blobs under prefix page by
// page and deletes each page's blobs, deleteParallel at a time; blobs deleted concurrently by
// someone else are not counted. On an error it stops listing, waits for the deletes in
// flight, and returns the first error with the count of blobs deleted.
func (p *Payloads) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("delete payloads: empty prefix: %w", engine.ErrInvalidEntity)
	}
	n, err := deletePrefix(ctx, p.c, prefix)
	if err != nil {
		return n, fmt.Errorf("delete payloads %s: %w", prefix, err)
	}
	return n, nil
}

// deletePrefix deletes the blobs of c under prefix as Payloads.DeletePrefix describes, and
// returns how many it deleted and the first error (reduced by classify).
func deletePrefix(ctx context.Context, c *container.Client, prefix string) (int, error) {
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix})
	var (
		n        atomic.Int64
		firstErr error
		mu       sync.Mutex // guards firstErr
	)
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	sem := make(chan struct{}, deleteParallel)
	var wg sync.WaitGroup
	for pager.More() && !failed() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			mu.Lock()
			firstErr = fmt.Errorf("list: %w", classify(err))
			mu.Unlock()
			break
		}
		for _, item := range page.Segment.BlobItems {
			if item == nil || item.Name == nil || failed() {
				continue
			}
			name := *item.Name
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				_, err := c.NewBlobClient(name).Delete(ctx, nil)
				switch {
				case err == nil:
					n.Add(1)
				case azsdk.Classify(err).Kind == azsdk.NotFound:
				default:
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("delete %s: %w", name, classify(err))
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait() // a page at a time: at most one page of names held
	}
	wg.Wait()
	return int(n.Load()), firstErr
}

// sentinelFor maps the kind of a blob service answer to the engine's sentinels. The only
// place that knows what the engine makes of them.
func sentinelFor(k azsdk.Kind) error {
	switch k {
	case azsdk.NotFound: // not ParentNotFound: a missing container is a deployment problem
		return engine.ErrNotFound
	case azsdk.TooLarge:
		return engine.ErrTooLarge
	}
	return nil
}

// classify maps blob service errors to the engine's sentinels, without the request URL (it
// may carry a SAS token) or the service's message.
func classify(err error) error { return azsdk.Reduce("blob", err, sentinelFor) }
