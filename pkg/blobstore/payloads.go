package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// MaxKeyLength is the longest key: Azure's blob name limit, in characters.
const MaxKeyLength = 1024

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

// checkKey enforces the blob naming rules a payload key must meet: non-empty, at most
// MaxKeyLength characters of valid UTF-8, no control characters or backslashes (Azure turns
// '\' into '/'), not ending in '.' or '/'. Errors wrap ErrInvalidEntity.
func checkKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", engine.ErrInvalidEntity)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: key is not valid UTF-8", engine.ErrInvalidEntity)
	case utf8.RuneCountInString(key) > MaxKeyLength:
		return fmt.Errorf("%w: key longer than %d characters", engine.ErrInvalidEntity, MaxKeyLength)
	case strings.HasSuffix(key, ".") || strings.HasSuffix(key, "/"):
		return fmt.Errorf("%w: key ends with '.' or '/'", engine.ErrInvalidEntity)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("%w: key contains %U", engine.ErrInvalidEntity, r)
		}
	}
	return nil
}

// Put implements engine.PayloadStore.
func (p *Payloads) Put(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
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
	if err := checkKey(key); err != nil {
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

// DeletePrefix implements engine.PayloadStore: it lists the blobs under prefix page by
// page and deletes each; blobs deleted concurrently by someone else are not counted.
func (p *Payloads) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("delete payloads: empty prefix: %w", engine.ErrInvalidEntity)
	}
	pager := p.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix})
	n := 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("delete payloads %s: list: %w", prefix, classify(err))
		}
		for _, item := range page.Segment.BlobItems {
			if item == nil || item.Name == nil {
				continue
			}
			_, err := p.c.NewBlobClient(*item.Name).Delete(ctx, nil)
			switch {
			case err == nil:
				n++
			case bloberror.HasCode(err, bloberror.BlobNotFound):
			default:
				return n, fmt.Errorf("delete payloads %s: delete %s: %w", prefix, *item.Name, classify(err))
			}
		}
	}
	return n, nil
}

// classify maps blob service errors to the engine's sentinels, without the request URL (it
// may carry a SAS token) or the service's message. The only place that knows codes.
func classify(err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		var kind error
		switch {
		case bloberror.HasCode(err, bloberror.BlobNotFound):
			kind = engine.ErrNotFound
		case bloberror.HasCode(err, bloberror.RequestBodyTooLarge):
			kind = engine.ErrTooLarge
		}
		if kind != nil {
			return fmt.Errorf("blob service answered %d %s: %w", re.StatusCode, re.ErrorCode, kind)
		}
		return fmt.Errorf("blob service answered %d %s", re.StatusCode, re.ErrorCode)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s request: %w", ue.Op, ue.Err)
	}
	return err
}
