package tablethreads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// DefaultTable is the table name Open uses when none is given.
const DefaultTable = "langgraphthreads"

// casAttempts bounds the compare-and-swap retries of one write.
const casAttempts = 3

// Store is a threads.Store on one Azure table, with values too long for a table entity in
// blobs of one container. It is safe for concurrent use, also across instances: every write
// is conditional on the entity's ETag.
type Store struct {
	client *aztables.Client
	index  *aztables.Client
	values *blobstore.Payloads
	logger *slog.Logger
}

var _ threads.Store = (*Store)(nil)

// Options configures Open.
type Options struct {
	// Table is the table name; "" means DefaultTable.
	Table string
	// IndexTable holds the index rows of Search, Count and ResetStaleLocks (doc.go); ""
	// means the table's name followed by "index" (cut to 63 characters).
	IndexTable string
	// Container holds the values too long for the table (one blob per thread and write);
	// "" means the table's name lower-cased (cut to 56 characters) followed by "-values".
	Container string
	// Logger receives the size warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Open returns a store on the tables opts.Table and opts.IndexTable and the container
// opts.Container of clients' account, creating them if missing. Its error names the table or
// container (from azure.Clients.EnsureTable and EnsureContainer).
func Open(ctx context.Context, clients *azure.Clients, opts Options) (*Store, error) {
	if opts.Table == "" {
		opts.Table = DefaultTable
	}
	if opts.IndexTable == "" {
		opts.IndexTable = indexTable(opts.Table)
	}
	if opts.Container == "" {
		opts.Container = valuesContainer(opts.Table)
	}
	table, err := clients.EnsureTable(ctx, opts.Table)
	if err != nil {
		return nil, err
	}
	index, err := clients.EnsureTable(ctx, opts.IndexTable)
	if err != nil {
		return nil, err
	}
	values, err := clients.EnsureContainer(ctx, opts.Container)
	if err != nil {
		return nil, err
	}
	return New(table, index, values, opts.Logger), nil
}

// New returns a store on an existing table client, an existing index table client (its own
// table: see doc.go) and an existing container client (for values too long for the table).
func New(client, index *aztables.Client, values *container.Client, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.Default()
	}
	return &Store{client: client, index: index, values: blobstore.New(values), logger: logger}
}

// kindOf is what the table service's answer in err means (azsdk.Unclassified for other
// errors).
func kindOf(err error) azsdk.Kind { return azsdk.Classify(err).Kind }

// isNotFound reports a missing thread (or a missing table: no thread is there either).
func isNotFound(err error) bool {
	k := kindOf(err)
	return k == azsdk.NotFound || k == azsdk.ParentNotFound
}

// refused reports a write the service answered with a refusal, so it did not happen: the
// index rows written for it can go. After any other failure the write may have landed, and
// its rows stay (the readers' repair removes them if it did not).
func refused(err error) bool {
	switch kindOf(err) {
	case azsdk.PreconditionFailed, azsdk.NotFound, azsdk.ParentNotFound, azsdk.AlreadyExists, azsdk.Conflict, azsdk.TooLarge, azsdk.BadRequest:
		return true
	}
	return false
}

// reduce drops the request URL and the service's message from an SDK error.
func reduce(err error) error { return azsdk.Reduce("table", err, nil) }

// encodeChecked encodes t and warns near the entity limit.
func (s *Store) encodeChecked(t threads.Thread, v storedValues, ix ixState) ([]byte, error) {
	b, size, err := encode(t, v, ix)
	if err != nil {
		return nil, err
	}
	if float64(size) >= warnFraction*maxEntityBytes {
		s.logger.Warn("thread entity is close to the 1 MiB limit", "thread_id", t.ThreadID, "bytes", size)
	}
	return b, nil
}

// Create implements threads.Store.
func (s *Store) Create(ctx context.Context, t threads.Thread) error {
	if err := threads.CheckSize(t); err != nil {
		return fmt.Errorf("create thread: %w", err)
	}
	v, created, err := s.place(ctx, t)
	if err != nil {
		return err
	}
	ix, rows, _ := nextIndex(threads.Thread{}, ixState{}, t)
	b, err := s.encodeChecked(t, v, ix)
	if err == nil {
		if err = s.putRows(ctx, rows); err != nil {
			s.dropRows(ctx, rows)
		}
	}
	if err == nil {
		if _, err = s.client.AddEntity(ctx, b, nil); err != nil && refused(err) {
			s.dropRows(ctx, rows)
		}
		if err != nil {
			if k := kindOf(err); k == azsdk.AlreadyExists || k == azsdk.Conflict {
				err = fmt.Errorf("create thread %q: %w", t.ThreadID, threads.ErrThreadExists)
			} else {
				err = fmt.Errorf("create thread %q: %w", t.ThreadID, reduce(err))
			}
		}
	}
	if err != nil && created {
		s.drop(ctx, t.ThreadID, v.ref)
	}
	return err
}

// record is a stored thread entity: the thread (Values nil when they were spilled), its ETag,
// the blob holding its spilled values, and its index bookkeeping.
type record struct {
	t    threads.Thread
	etag azcore.ETag
	ref  string
	ix   ixState
}

// get reads a thread's entity.
func (s *Store) get(ctx context.Context, tid string) (record, error) {
	resp, err := s.client.GetEntity(ctx, partitionKey(tid), rowKey(tid), nil)
	if err != nil {
		if isNotFound(err) {
			return record{}, fmt.Errorf("get thread %q: %w", tid, threads.ErrThreadNotFound)
		}
		return record{}, fmt.Errorf("get thread %q: %w", tid, reduce(err))
	}
	t, ref, ix, err := decode(resp.Value)
	return record{t: t, etag: resp.ETag, ref: ref, ix: ix}, err
}

// Get implements threads.Store.
func (s *Store) Get(ctx context.Context, tid string) (threads.Thread, error) {
	for attempt := 0; ; attempt++ {
		rec, err := s.get(ctx, tid)
		if err != nil {
			return threads.Thread{}, err
		}
		t := rec.t
		if err := s.load(ctx, &t, rec.ref); errors.Is(err, errValuesGone) && attempt+1 < casAttempts {
			continue
		} else if err != nil {
			return threads.Thread{}, err
		}
		return t, nil
	}
}

// errConflict is a lost compare-and-swap.
var errConflict = errors.New("tablethreads: entity changed")

// update applies change to the stored thread with If-Match, retrying lost races. change sees
// Values nil when they are spilled and leaves them there unless it sets new ones; with
// withValues the returned thread carries its values (read back from their blob if need be).
func (s *Store) update(ctx context.Context, tid string, withValues bool, change func(*threads.Thread) error) (threads.Thread, error) {
	for attempt := 0; ; attempt++ {
		rec, err := s.get(ctx, tid)
		if err != nil {
			return threads.Thread{}, err
		}
		t, etag, ref := rec.t, rec.etag, rec.ref
		if err := change(&t); err != nil {
			return threads.Thread{}, err
		}
		if err := threads.CheckSize(t); err != nil {
			return threads.Thread{}, fmt.Errorf("update thread: %w", err)
		}
		v, created := storedValues{ref: ref}, false
		if t.Values != nil || ref == "" {
			if v, created, err = s.place(ctx, t); err != nil {
				return threads.Thread{}, err
			}
		}
		ix, added, dropped := nextIndex(rec.t, rec.ix, t)
		b, err := s.encodeChecked(t, v, ix)
		if err == nil {
			if err = s.putRows(ctx, added); err != nil {
				s.dropRows(ctx, added)
			}
		}
		if err == nil {
			_, err = s.client.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
			if err != nil && refused(err) {
				s.dropRows(ctx, added)
			}
		}
		if err != nil && created {
			s.drop(ctx, tid, v.ref)
		}
		switch {
		case err == nil:
			s.dropRows(ctx, dropped)
			if ref != v.ref {
				s.drop(ctx, tid, ref)
			}
			if withValues && t.Values == nil {
				if err := s.load(ctx, &t, v.ref); errors.Is(err, errValuesGone) {
					return s.Get(ctx, tid) // replaced since: the newest thread is the answer
				} else if err != nil {
					return threads.Thread{}, err
				}
			}
			return t, nil
		case errors.Is(err, threads.ErrTooLarge):
			return threads.Thread{}, err
		case kindOf(err) == azsdk.PreconditionFailed:
			if attempt+1 >= casAttempts {
				return threads.Thread{}, fmt.Errorf("update thread %q: %w", tid, errConflict)
			}
		case isNotFound(err):
			return threads.Thread{}, fmt.Errorf("update thread %q: %w", tid, threads.ErrThreadNotFound)
		default:
			return threads.Thread{}, fmt.Errorf("update thread %q: %w", tid, reduce(err))
		}
	}
}

// PatchMetadata implements threads.Store.
func (s *Store) PatchMetadata(ctx context.Context, tid string, metadata map[string]any, now time.Time) (threads.Thread, error) {
	return s.update(ctx, tid, true, func(t *threads.Thread) error {
		t.Metadata = threads.MergeMetadata(t.Metadata, metadata)
		t.UpdatedAt = now.UTC()
		return nil
	})
}

// Delete implements threads.Store: the entity (If-Match the version read), then its index
// rows and every values blob of the thread.
func (s *Store) Delete(ctx context.Context, tid string) error {
	for attempt := 0; ; attempt++ {
		rec, err := s.get(ctx, tid)
		if err != nil {
			return fmt.Errorf("delete thread: %w", err)
		}
		_, err = s.client.DeleteEntity(ctx, partitionKey(tid), rowKey(tid), &aztables.DeleteEntityOptions{IfMatch: &rec.etag})
		switch {
		case err == nil:
			s.dropRows(ctx, rowsOf(rec.t, rec.ix))
			s.drop(ctx, tid, valuesPrefix(tid))
			return nil
		case isNotFound(err):
			return fmt.Errorf("delete thread %q: %w", tid, threads.ErrThreadNotFound)
		case kindOf(err) != azsdk.PreconditionFailed || attempt+1 >= casAttempts:
			return fmt.Errorf("delete thread %q: %w", tid, reduce(err))
		}
	}
}

// Acquire implements threads.Store: a compare-and-swap on the entity's ETag; after 3 lost
// races the thread counts as busy.
func (s *Store) Acquire(ctx context.Context, tid, assistantID string, metadata map[string]any, now time.Time) (threads.Thread, error) {
	t, err := s.update(ctx, tid, true, func(t *threads.Thread) error {
		switch {
		case t.AssistantID != "" && t.AssistantID != assistantID:
			return &threads.BoundError{ThreadID: tid, Bound: t.AssistantID, Requested: assistantID}
		case t.Status == threads.StatusBusy:
			return fmt.Errorf("acquire thread %q: %w", tid, threads.ErrThreadBusy)
		}
		t.Status, t.UpdatedAt, t.AssistantID = threads.StatusBusy, now.UTC(), assistantID
		t.Metadata = threads.MergeMetadata(t.Metadata, metadata)
		return nil
	})
	if errors.Is(err, errConflict) {
		return threads.Thread{}, fmt.Errorf("acquire thread %q: %w", tid, threads.ErrThreadBusy)
	}
	return t, err
}

// Release implements threads.Store.
func (s *Store) Release(ctx context.Context, tid string, status threads.Status, values json.RawMessage, now time.Time) error {
	if err := threads.CheckReleaseStatus(status); err != nil {
		return err
	}
	_, err := s.update(ctx, tid, false, func(t *threads.Thread) error {
		t.Status, t.UpdatedAt = status, now.UTC()
		if values != nil {
			t.Values = values
		}
		return nil
	})
	return err
}
