package tablethreads

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// countWorkers bounds the point reads Count has in flight.
const countWorkers = 16

// checkQuery refuses an unknown status.
func checkQuery(q threads.Query) error {
	if q.Status != "" && !q.Status.Valid() {
		return fmt.Errorf("%w: unknown status %q", threads.ErrInvalidArgument, q.Status)
	}
	return nil
}

// verify reads the thread row names and reports whether row is its live row (a dead row is
// repaired on the way).
func (s *Store) verify(ctx context.Context, row ixRow) (record, bool, error) {
	rec, err := s.get(ctx, row.tid)
	found := err == nil
	if err != nil && !errors.Is(err, threads.ErrThreadNotFound) {
		return record{}, false, err
	}
	return rec, s.live(ctx, row, found, rec.t, rec.ix), nil
}

// Search implements threads.Store. It reads the index family that lists every thread q can
// match (doc.go) newest first, a page of Offset+Limit rows per partition, and one entity per
// row until the page is full: what it returns, what it skips (Offset), and rows whose
// thread does not match the metadata filters or that no thread vouches for.
func (s *Store) Search(ctx context.Context, q threads.Query) ([]threads.Thread, error) {
	if err := checkQuery(q); err != nil {
		return nil, err
	}
	top := 0
	if q.Limit > 0 {
		top = q.Offset + q.Limit
	}
	var m merged
	for _, pk := range family(q) {
		m = append(m, s.newCursor(pk, top))
	}
	page, refs, skipped := []threads.Thread{}, []string{}, 0
	for q.Limit == 0 || len(page) < q.Limit {
		row, ok, err := m.next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		rec, ok, err := s.verify(ctx, row)
		if err != nil {
			return nil, err
		}
		if !ok || !q.Matches(rec.t) {
			continue
		}
		if skipped < q.Offset {
			skipped++
			continue
		}
		page, refs = append(page, rec.t), append(refs, rec.ref)
	}
	for i := range page {
		err := s.load(ctx, &page[i], refs[i])
		if errors.Is(err, errValuesGone) {
			page[i], err = s.Get(ctx, page[i].ThreadID)
		}
		if err != nil {
			return nil, err
		}
	}
	return page, nil
}

// rows lists every row of the partitions.
func (s *Store) rows(ctx context.Context, pks []string) ([]ixRow, error) {
	var m merged
	for _, pk := range pks {
		m = append(m, s.newCursor(pk, 0))
	}
	var out []ixRow
	for {
		row, ok, err := m.next(ctx)
		if err != nil || !ok {
			return out, err
		}
		out = append(out, row)
	}
}

// Count implements threads.Store: it reads every row of the family Search would read and
// verifies each against its thread (countWorkers point reads at a time), so it costs one
// read per matching thread (plus rows of threads the metadata filters drop).
func (s *Store) Count(ctx context.Context, q threads.Query) (int, error) {
	if err := checkQuery(q); err != nil {
		return 0, err
	}
	rows, err := s.rows(ctx, family(q))
	if err != nil {
		return 0, err
	}
	var (
		mu       sync.Mutex
		n        int
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan ixRow)
	for range min(countWorkers, len(rows)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for row := range next {
				rec, ok, err := s.verify(ctx, row)
				mu.Lock()
				switch {
				case err != nil && firstErr == nil:
					firstErr = err
				case err == nil && ok && q.Matches(rec.t):
					n++
				}
				mu.Unlock()
			}
		}()
	}
	for _, row := range rows {
		next <- row
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return n, nil
}

// ResetStaleLocks implements threads.Store: it reads the busy rows of the index only, one
// entity per row, and moves each stale busy thread with one compare-and-swap; a thread that
// changed meanwhile is left alone.
func (s *Store) ResetStaleLocks(ctx context.Context, olderThan time.Duration, to threads.Status, now time.Time) (int, error) {
	if err := threads.CheckResetArgs(olderThan, to); err != nil {
		return 0, err
	}
	rows, err := s.rows(ctx, family(threads.Query{Status: threads.StatusBusy}))
	if err != nil {
		return 0, err
	}
	cutoff, n := now.Add(-olderThan), 0
	for _, row := range rows {
		rec, ok, err := s.verify(ctx, row)
		if err != nil {
			return n, err
		}
		if !ok || rec.t.Status != threads.StatusBusy || !rec.t.UpdatedAt.Before(cutoff) {
			continue
		}
		_, err = s.update(ctx, row.tid, false, func(t *threads.Thread) error {
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

// indexTable is the default Options.IndexTable of a table.
func indexTable(table string) string {
	name := table + "index"
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}
