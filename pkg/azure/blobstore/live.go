package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// LiveOptions tunes a Live. The zero value is ready to use.
type LiveOptions struct {
	// MaxAppends is the most appends one log takes: 0 (or anything outside 1 to
	// engine.MaxLiveAppends) is engine.MaxLiveAppends, Azure's own limit. Tests lower it to
	// reach the limit in a few calls; the same seal enforces either.
	MaxAppends int
}

// Live is an engine.LiveStore on one blob container: one append blob per log, named by its
// key. Safe for concurrent use.
//
// An append is one Append Block request conditioned on the log's length (the append
// position), two for a log's first (Create with If-None-Match "*", then the block); Length is
// one Get Blob Properties (a HEAD); Read is one ranged Get Blob, at the log's end too, where
// the service answers 416 with the length in its Content-Range (a HEAD more if it did not). The append that takes a log to MaxAppends blocks seals
// the blob (one request more, once a log), so every later append is refused however many
// blocks the service would still take.
type Live struct {
	c          *container.Client
	maxAppends int
}

var _ engine.LiveStore = (*Live)(nil)

// NewLive returns a Live on an existing container (azure.Clients.EnsureContainer creates
// it). opts may be nil. Give it a container of its own: its DeletePrefix deletes every blob
// under the prefix, the payloads of a shared container's run included.
func NewLive(c *container.Client, opts *LiveOptions) *Live {
	l := &Live{c: c, maxAppends: engine.MaxLiveAppends}
	if opts != nil && opts.MaxAppends > 0 && opts.MaxAppends < engine.MaxLiveAppends {
		l.maxAppends = opts.MaxAppends
	}
	return l
}

// OpenLive returns a Live on the container of clients' account, creating the container if
// missing. Its error names the container (from azure.Clients.EnsureContainer).
func OpenLive(ctx context.Context, clients *azure.Clients, containerName string, opts *LiveOptions) (*Live, error) {
	c, err := clients.EnsureContainer(ctx, containerName)
	if err != nil {
		return nil, err
	}
	return NewLive(c, opts), nil
}

// Append implements engine.LiveStore. The SDK retries a request whose reply was lost; when the
// first try had landed, the retry meets a log longer than at and reports ErrConflict, as
// the contract says: the caller reads from at to tell.
func (l *Live) Append(ctx context.Context, key string, at int64, data []byte) (int64, error) {
	if err := engine.ValidateLiveAppend(key, at, data); err != nil {
		return 0, fmt.Errorf("append live %s: %w", key, err)
	}
	ab := l.c.NewAppendBlobClient(key)
	if at == 0 {
		// Create only a missing blob: Create of an existing one would empty it.
		_, err := ab.Create(ctx, &appendblob.CreateOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)},
		}})
		if k := azsdk.Classify(err).Kind; err != nil && k != azsdk.AlreadyExists && k != azsdk.PreconditionFailed {
			return 0, fmt.Errorf("append live %s: create: %w", key, l.classify(key, err))
		}
	}
	resp, err := ab.AppendBlock(ctx, streaming.NopCloser(bytes.NewReader(data)), &appendblob.AppendBlockOptions{
		AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: &at},
	})
	if err != nil {
		return 0, fmt.Errorf("append live %s at %d: %w", key, at, l.classify(key, err))
	}
	if resp.BlobCommittedBlockCount != nil && int(*resp.BlobCommittedBlockCount) >= l.maxAppends {
		// The log is full. A seal that fails is tried again by the next append that lands,
		// which Azure's own block limit stops at 50 000.
		_, _ = ab.Seal(context.WithoutCancel(ctx), nil)
	}
	return at + int64(len(data)), nil
}

// Read implements engine.LiveStore.
func (l *Live) Read(ctx context.Context, key string, from int64, max int) ([]byte, int64, error) {
	if err := engine.ValidateLiveRead(from, max); err != nil {
		return nil, 0, fmt.Errorf("read live %s: %w", key, err)
	}
	if err := engine.CheckPayloadKey(key); err != nil {
		return nil, 0, fmt.Errorf("read live %s: %w", key, engine.ErrNotFound)
	}
	bc := l.c.NewBlobClient(key)
	// A log only grows: a range past its end (416) that a HEAD then finds inside it was
	// appended to in between, and the next download has it.
	for range 3 {
		resp, err := bc.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: from, Count: int64(max)}})
		if err == nil {
			data, length, err := readRange(resp, from, max)
			if err != nil {
				return nil, 0, fmt.Errorf("read live %s from %d: %w", key, from, err)
			}
			if length < 0 { // no Content-Range: ask for the length
				if length, err = l.Length(ctx, key); err != nil {
					return nil, 0, err
				}
			}
			return data, length, nil
		}
		if !bloberror.HasCode(err, bloberror.InvalidRange) {
			return nil, 0, fmt.Errorf("read live %s from %d: %w", key, from, l.classify(key, err))
		}
		length := unsatisfiedLength(err)
		if length < 0 { // the 416 did not say: ask
			if length, err = l.Length(ctx, key); err != nil {
				return nil, 0, err
			}
		}
		switch {
		case from == length:
			return []byte{}, length, nil
		case from > length:
			return nil, length, fmt.Errorf("read live %s from %d: length %d: %w", key, from, length, engine.ErrInvalidQuery)
		}
	}
	return nil, 0, fmt.Errorf("read live %s from %d: the log's length and its ranges disagree", key, from)
}

// readRange reads a ranged download's body and the log's length from its Content-Range
// ("bytes <first>-<last>/<length>"); -1 when the answer has none.
func readRange(resp blob.DownloadStreamResponse, from int64, max int) ([]byte, int64, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return nil, 0, classify(err)
	}
	if len(data) > max {
		return nil, 0, fmt.Errorf("the service sent more than the %d bytes asked for", max)
	}
	length := int64(-1)
	if cr := resp.ContentRange; cr != nil {
		if _, total, ok := strings.Cut(*cr, "/"); ok {
			if n, err := strconv.ParseInt(total, 10, 64); err == nil && n >= from+int64(len(data)) {
				length = n
			}
		}
	}
	return data, length, nil
}

// unsatisfiedLength returns the length a 416 answer's Content-Range ("bytes */<length>")
// gives, or -1.
func unsatisfiedLength(err error) int64 {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		return -1
	}
	total, ok := strings.CutPrefix(re.RawResponse.Header.Get("Content-Range"), "bytes */")
	if !ok {
		return -1
	}
	n, perr := strconv.ParseInt(total, 10, 64)
	if perr != nil || n < 0 {
		return -1
	}
	return n
}

// Length implements engine.LiveStore: one HEAD.
func (l *Live) Length(ctx context.Context, key string) (int64, error) {
	if err := engine.CheckPayloadKey(key); err != nil {
		return 0, fmt.Errorf("live length %s: %w", key, engine.ErrNotFound)
	}
	props, err := l.c.NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("live length %s: %w", key, l.classify(key, err))
	}
	if props.ContentLength == nil {
		return 0, fmt.Errorf("live length %s: the service sent no Content-Length", key)
	}
	return *props.ContentLength, nil
}

// DeletePrefix implements engine.LiveStore: as Payloads.DeletePrefix, on the logs' container.
func (l *Live) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("delete live logs: empty prefix: %w", engine.ErrInvalidEntity)
	}
	n, err := deletePrefix(ctx, l.c, prefix)
	if err != nil {
		return n, fmt.Errorf("delete live logs %s: %w", prefix, err)
	}
	return n, nil
}

// classify maps the blob service's answers about log key to the engine's sentinels: an append
// position that does not match (412 AppendPositionConditionNotMet) is ErrConflict, a full
// log (409 BlockCountExceedsLimit past Azure's blocks, 409 BlobIsSealed past l.maxAppends)
// a *engine.LimitError, the rest as the payloads' (sentinelFor).
func (l *Live) classify(key string, err error) error {
	a := azsdk.Classify(err)
	if a.Status == 0 {
		return classify(err)
	}
	return azsdk.NewServiceError("blob", a.Status, a.Code, func(k azsdk.Kind) error {
		switch {
		case strings.EqualFold(a.Code, string(bloberror.BlockCountExceedsLimit)),
			strings.EqualFold(a.Code, codeBlobIsSealed):
			return &engine.LimitError{Limit: "live appends", Key: key, Size: l.maxAppends + 1, Max: l.maxAppends}
		case k == azsdk.PreconditionFailed:
			return engine.ErrConflict
		}
		return sentinelFor(k)
	})
}

// codeBlobIsSealed is the blob service's answer to a write to a sealed append blob (409);
// the SDK's bloberror names no such code.
const codeBlobIsSealed = "BlobIsSealed"
