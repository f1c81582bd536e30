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

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// DefaultTable is the table name Open uses when none is given.
const DefaultTable = "langgraphthreads"

// casAttempts bounds the compare-and-swap retries of one write.
const casAttempts = 3

// Store is a threads.Store on one Azure table. It is safe for concurrent use, also across
// instances: every write is conditional on the entity's ETag.
type Store struct {
	client *aztables.Client
	logger *slog.Logger
}

var _ threads.Store = (*Store)(nil)

// Options configures Open.
type Options struct {
	// Table is the table name; "" means DefaultTable.
	Table string
	// Logger receives the size warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Open returns a store on the table opts.Table of clients' account, creating the table if
// missing. Its error names the table (from azure.Clients.EnsureTable).
func Open(ctx context.Context, clients *azure.Clients, opts Options) (*Store, error) {
	if opts.Table == "" {
		opts.Table = DefaultTable
	}
	table, err := clients.EnsureTable(ctx, opts.Table)
	if err != nil {
		return nil, err
	}
	return New(table, opts.Logger), nil
}

// New returns a store on an existing table client.
func New(client *aztables.Client, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.Default()
	}
	return &Store{client: client, logger: logger}
}

// kindOf is what the table service's answer in err means (azsdk.Unclassified for other
// errors).
func kindOf(err error) azsdk.Kind { return azsdk.Classify(err).Kind }

// isNotFound reports a missing thread (or a missing table: no thread is there either).
func isNotFound(err error) bool {
	k := kindOf(err)
	return k == azsdk.NotFound || k == azsdk.ParentNotFound
}

// reduce drops the request URL and the service's message from an SDK error.
func reduce(err error) error { return azsdk.Reduce("table", err, nil) }

// encodeChecked encodes t and warns near the entity limit.
func (s *Store) encodeChecked(t threads.Thread) ([]byte, error) {
	b, size, err := encode(t)
	if err != nil {
		return nil, err
	}
	if float64(size) >= warnFraction*MaxEntityBytes {
		s.logger.Warn("thread entity is close to the 1 MiB limit", "thread_id", t.ThreadID, "bytes", size)
	}
	return b, nil
}

// Create implements threads.Store.
func (s *Store) Create(ctx context.Context, t threads.Thread) error {
	b, err := s.encodeChecked(t)
	if err != nil {
		return err
	}
	if _, err := s.client.AddEntity(ctx, b, nil); err != nil {
		if k := kindOf(err); k == azsdk.AlreadyExists || k == azsdk.Conflict {
			return fmt.Errorf("create thread %q: %w", t.ThreadID, threads.ErrThreadExists)
		}
		return fmt.Errorf("create thread %q: %w", t.ThreadID, reduce(err))
	}
	return nil
}

// get reads a thread and its ETag.
func (s *Store) get(ctx context.Context, tid string) (threads.Thread, azcore.ETag, error) {
	resp, err := s.client.GetEntity(ctx, partitionKey(tid), rowKey(tid), nil)
	if err != nil {
		if isNotFound(err) {
			return threads.Thread{}, "", fmt.Errorf("get thread %q: %w", tid, threads.ErrThreadNotFound)
		}
		return threads.Thread{}, "", fmt.Errorf("get thread %q: %w", tid, reduce(err))
	}
	t, err := decode(resp.Value)
	return t, resp.ETag, err
}

// Get implements threads.Store.
func (s *Store) Get(ctx context.Context, tid string) (threads.Thread, error) {
	t, _, err := s.get(ctx, tid)
	return t, err
}

// errConflict is a lost compare-and-swap.
var errConflict = errors.New("tablethreads: entity changed")

// update applies change to the stored thread with If-Match, retrying lost races.
func (s *Store) update(ctx context.Context, tid string, change func(*threads.Thread) error) (threads.Thread, error) {
	for attempt := 0; ; attempt++ {
		t, etag, err := s.get(ctx, tid)
		if err != nil {
			return threads.Thread{}, err
		}
		if err := change(&t); err != nil {
			return threads.Thread{}, err
		}
		b, err := s.encodeChecked(t)
		if err != nil {
			return threads.Thread{}, err
		}
		_, err = s.client.UpdateEntity(ctx, b, &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
		switch {
		case err == nil:
			return t, nil
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
	return s.update(ctx, tid, func(t *threads.Thread) error {
		t.Metadata = threads.MergeMetadata(t.Metadata, metadata)
		t.UpdatedAt = now.UTC()
		return nil
	})
}

// Delete implements threads.Store.
func (s *Store) Delete(ctx context.Context, tid string) error {
	if _, err := s.client.DeleteEntity(ctx, partitionKey(tid), rowKey(tid), nil); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("delete thread %q: %w", tid, threads.ErrThreadNotFound)
		}
		return fmt.Errorf("delete thread %q: %w", tid, reduce(err))
	}
	return nil
}

// scan lists every thread with status (all when ""), filtered client-side by q.
func (s *Store) scan(ctx context.Context, q threads.Query) ([]threads.Thread, error) {
	var opts aztables.ListEntitiesOptions
	if q.Status != "" {
		if !q.Status.Valid() {
			return nil, fmt.Errorf("%w: unknown status %q", threads.ErrInvalidArgument, q.Status)
		}
		f := fmt.Sprintf("status eq '%s'", q.Status)
		opts.Filter = &f
	}
	out := []threads.Thread{}
	pager := s.client.NewListEntitiesPager(&opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list threads: %w", reduce(err))
		}
		for _, b := range page.Entities {
			t, err := decode(b)
			if err != nil {
				return nil, err
			}
			if q.Matches(t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// Search implements threads.Store.
func (s *Store) Search(ctx context.Context, q threads.Query) ([]threads.Thread, error) {
	ts, err := s.scan(ctx, q)
	if err != nil {
		return nil, err
	}
	return threads.SortAndPage(ts, q), nil
}

// Count implements threads.Store.
func (s *Store) Count(ctx context.Context, q threads.Query) (int, error) {
	ts, err := s.scan(ctx, q)
	return len(ts), err
}

// Acquire implements threads.Store: a compare-and-swap on the entity's ETag; after 3 lost
// races the thread counts as busy.
func (s *Store) Acquire(ctx context.Context, tid, assistantID string, metadata map[string]any, now time.Time) (threads.Thread, error) {
	t, err := s.update(ctx, tid, func(t *threads.Thread) error {
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
	_, err := s.update(ctx, tid, func(t *threads.Thread) error {
		t.Status, t.UpdatedAt = status, now.UTC()
		if values != nil {
			t.Values = values
		}
		return nil
	})
	return err
}

// ResetStaleLocks implements threads.Store: one compare-and-swap per stale busy thread; a
// thread that changed meanwhile is left alone.
func (s *Store) ResetStaleLocks(ctx context.Context, olderThan time.Duration, to threads.Status, now time.Time) (int, error) {
	if err := threads.CheckResetArgs(olderThan, to); err != nil {
		return 0, err
	}
	busy, err := s.scan(ctx, threads.Query{Status: threads.StatusBusy})
	if err != nil {
		return 0, err
	}
	cutoff, n := now.Add(-olderThan), 0
	for _, b := range busy {
		if !b.UpdatedAt.Before(cutoff) {
			continue
		}
		_, err := s.update(ctx, b.ThreadID, func(t *threads.Thread) error {
			if t.Status != threads.StatusBusy || !t.UpdatedAt.Before(cutoff) {
				return errSkip
			}
			t.Status, t.UpdatedAt = to, now.UTC()
			return nil
		})
		switch {
		case err == nil:
			n++
		case errors.Is(err, errSkip), errors.Is(err, threads.ErrThreadNotFound), errors.Is(err, errConflict):
		default:
			return n, err
		}
	}
	return n, nil
}

var errSkip = errors.New("tablethreads: thread no longer stale")
