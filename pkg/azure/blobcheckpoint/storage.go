package blobcheckpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// errConflict reports a conditional write or delete whose condition failed.
var errConflict = errors.New("blob changed or exists")

// sentinelFor maps the kind of a blob service answer to the contract's sentinels. The only
// place that knows what the saver makes of them.
func sentinelFor(k azsdk.Kind) error {
	switch k {
	case azsdk.NotFound, azsdk.ParentNotFound:
		return checkpoint.ErrNotFound
	case azsdk.PreconditionFailed, azsdk.AlreadyExists:
		return errConflict
	case azsdk.TooLarge:
		return checkpoint.ErrTooLarge
	}
	return nil
}

// classify maps blob service errors to the contract's sentinels, without the request URL or
// the service's message.
func classify(err error) error { return azsdk.Reduce("blob", err, sentinelFor) }

// upload writes one blob. cond, when non-nil, makes the write conditional.
func (s *Saver) upload(ctx context.Context, name string, data []byte, md map[string]*string, cond *blob.ModifiedAccessConditions) error {
	opts := &blockblob.UploadOptions{Metadata: md}
	if cond != nil {
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: cond}
	}
	if _, err := s.c.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), opts); err != nil {
		return fmt.Errorf("write %s: %w", name, classify(err))
	}
	return nil
}

// download reads one blob with its metadata and ETag. Returns checkpoint.ErrNotFound.
func (s *Saver) download(ctx context.Context, name string) ([]byte, map[string]*string, azcore.ETag, error) {
	resp, err := s.c.NewBlobClient(name).DownloadStream(ctx, nil)
	if err != nil {
		return nil, nil, "", fmt.Errorf("read %s: %w", name, classify(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, checkpoint.MaxValueBytes+1))
	if err != nil {
		return nil, nil, "", fmt.Errorf("read %s: %w", name, classify(err))
	}
	if len(data) > checkpoint.MaxValueBytes {
		return nil, nil, "", fmt.Errorf("read %s: %w", name, checkpoint.ErrTooLarge)
	}
	var etag azcore.ETag
	if resp.ETag != nil {
		etag = *resp.ETag
	}
	return data, resp.Metadata, etag, nil
}

// remove deletes one blob; a missing blob is not an error. It reports whether it deleted.
// etag, when set, makes the delete conditional (errConflict when the blob changed).
func (s *Saver) remove(ctx context.Context, name string, etag azcore.ETag) (bool, error) {
	var opts *blob.DeleteOptions
	if etag != "" {
		opts = &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &etag}}}
	}
	_, err := s.c.NewBlobClient(name).Delete(ctx, opts)
	switch {
	case err == nil:
		return true, nil
	case azsdk.Classify(err).Kind == azsdk.NotFound:
		return false, nil
	}
	return false, fmt.Errorf("delete %s: %w", name, classify(err))
}

// item is one listed blob.
type item struct {
	name     string
	etag     azcore.ETag
	modified time.Time
	meta     map[string]*string
}

// list returns every blob under prefix, in name order.
func (s *Saver) list(ctx context.Context, prefix string, withMeta bool) ([]item, error) {
	pager := s.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
		Prefix: &prefix, Include: container.ListBlobsInclude{Metadata: withMeta}})
	var out []item
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", prefix, classify(err))
		}
		for _, b := range page.Segment.BlobItems {
			if b == nil || b.Name == nil {
				continue
			}
			it := item{name: *b.Name, meta: b.Metadata}
			if b.Properties != nil {
				if b.Properties.ETag != nil {
					it.etag = *b.Properties.ETag
				}
				if b.Properties.LastModified != nil {
					it.modified = *b.Properties.LastModified
				}
			}
			out = append(out, it)
		}
	}
	return out, nil
}

// removeAll deletes every blob under prefix and returns how many it deleted.
func (s *Saver) removeAll(ctx context.Context, prefix string) (int, error) {
	items, err := s.list(ctx, prefix, false)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range items {
		ok, err := s.remove(ctx, it.name, "")
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}
