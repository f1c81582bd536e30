package blobcheckpoint

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// DeleteThread implements checkpoint.Saver: it deletes every blob under threads/<tid>/.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := checkpoint.CheckNames(threadID, ""); err != nil {
		return nil
	}
	if _, err := s.removeAll(ctx, threadPrefix(threadID)); err != nil {
		return fmt.Errorf("delete thread %q: %w", threadID, err)
	}
	return nil
}

// DeleteBefore implements checkpoint.Saver.
func (s *Saver) DeleteBefore(ctx context.Context, ref checkpoint.Ref) (int, error) {
	if err := checkpoint.CheckNames(ref.ThreadID, ref.NS, ref.ID); err != nil {
		return 0, fmt.Errorf("delete checkpoints: %w", err)
	}
	ids, err := s.dirs(ctx, ref.ThreadID, ref.NS)
	if err != nil {
		return 0, fmt.Errorf("delete checkpoints: %w", err)
	}
	var doomed []string
	for _, id := range ids {
		if id < ref.ID {
			doomed = append(doomed, id)
		}
	}
	return s.deleteCheckpoints(ctx, ref.ThreadID, ref.NS, doomed)
}

// dirs returns the ids of every checkpoint directory of the namespace, committed or not.
func (s *Saver) dirs(ctx context.Context, threadID, ns string) ([]string, error) {
	prefix := checkpointsPrefix(threadID, ns)
	items, err := s.list(ctx, prefix, false)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, it := range items {
		seg, _, _ := strings.Cut(strings.TrimPrefix(it.name, prefix), "/")
		if id, err := url.PathUnescape(seg); err == nil && (len(ids) == 0 || ids[len(ids)-1] != id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// deleteCheckpoints deletes each checkpoint's checkpoint.bin first (so a half-deleted
// checkpoint is no longer committed), then the rest of its directory. It counts the
// committed ones.
func (s *Saver) deleteCheckpoints(ctx context.Context, threadID, ns string, ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		ok, err := s.remove(ctx, checkpointBlob(threadID, ns, id), "")
		if err != nil {
			return n, fmt.Errorf("delete checkpoint %s: %w", id, err)
		}
		if ok {
			n++
		}
		if _, err := s.removeAll(ctx, checkpointDir(threadID, ns, id)); err != nil {
			return n, fmt.Errorf("delete checkpoint %s: %w", id, err)
		}
	}
	return n, nil
}

// Prune implements checkpoint.Saver.
func (s *Saver) Prune(ctx context.Context, threadID, ns string, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("prune checkpoints: %w: keep must not be negative, got %d", checkpoint.ErrInvalidArgument, keep)
	}
	if err := checkpoint.CheckNames(threadID, ns); err != nil {
		return 0, fmt.Errorf("prune checkpoints: %w", err)
	}
	ids, err := s.committed(ctx, threadID, ns)
	if err != nil {
		return 0, fmt.Errorf("prune checkpoints: %w", err)
	}
	if len(ids) <= keep {
		return 0, nil
	}
	return s.deleteCheckpoints(ctx, threadID, ns, ids[keep:])
}

// SweepOrphanedValues implements checkpoint.Saver. Per namespace: list values and committed
// checkpoints, read every checkpoint's versions (an unreadable one skips the namespace),
// and take as orphans the values no checkpoint references that were last modified before
// the grace period. Before each delete the checkpoints are listed again (new ones read),
// and the delete is conditional on the value's ETag from the listing.
func (s *Saver) SweepOrphanedValues(ctx context.Context, threadID string, opts checkpoint.SweepOptions) (checkpoint.SweepReport, error) {
	grace, err := checkpoint.SweepGrace(opts)
	if err != nil {
		return checkpoint.SweepReport{}, err
	}
	var rep checkpoint.SweepReport
	if checkpoint.CheckNames(threadID, "") != nil {
		return rep, nil
	}
	namespaces, err := s.namespaces(ctx, threadID)
	if err != nil {
		return rep, fmt.Errorf("sweep values of thread %q: %w", threadID, err)
	}
	cutoff := s.now().Add(-grace)
	for _, ns := range namespaces {
		sw := &nsSweep{s: s, tid: threadID, ns: ns, versions: map[string]map[string]string{}}
		if err := sw.refresh(ctx); err != nil {
			s.logger.Warn("checkpoint sweep skipped a namespace", "thread_id", threadID, "ns", ns, "error", err)
			rep.SkippedNamespaces = append(rep.SkippedNamespaces, ns)
			continue
		}
		values, err := s.list(ctx, valuesPrefix(threadID, ns), false)
		if err != nil {
			return rep, fmt.Errorf("sweep values of thread %q: %w", threadID, err)
		}
		for _, v := range values {
			key := strings.TrimPrefix(v.name, valuesPrefix(threadID, ns))
			if sw.used(key) || !v.modified.Before(cutoff) {
				continue
			}
			rep.Orphans++
			if !opts.Delete {
				continue
			}
			if err := sw.refresh(ctx); err != nil {
				s.logger.Warn("checkpoint sweep stopped in a namespace", "thread_id", threadID, "ns", ns, "error", err)
				rep.SkippedNamespaces = append(rep.SkippedNamespaces, ns)
				break
			}
			if sw.used(key) {
				rep.Orphans--
				continue
			}
			ok, err := s.remove(ctx, v.name, v.etag)
			if err != nil && !errors.Is(err, errConflict) {
				return rep, fmt.Errorf("sweep values of thread %q: %w", threadID, err)
			}
			if ok {
				rep.Deleted++
			}
		}
	}
	return rep, nil
}

// namespaces lists the thread's namespaces.
func (s *Saver) namespaces(ctx context.Context, threadID string) ([]string, error) {
	prefix := threadPrefix(threadID) + "ns/"
	items, err := s.list(ctx, prefix, false)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		seg, _, _ := strings.Cut(strings.TrimPrefix(it.name, prefix), "/")
		if ns, err := url.PathUnescape(seg); err == nil && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out, nil
}

// nsSweep tracks the channel versions the committed checkpoints of one namespace reference.
type nsSweep struct {
	s        *Saver
	tid, ns  string
	versions map[string]map[string]string // checkpoint id → channel → version
	refs     map[string]bool              // value names under values/ that some checkpoint references
}

// refresh lists the committed checkpoints again and reads those not read yet; it fails
// when one cannot be read (fail closed).
func (w *nsSweep) refresh(ctx context.Context) error {
	ids, err := w.s.committed(ctx, w.tid, w.ns)
	if err != nil {
		return err
	}
	current := map[string]map[string]string{}
	for _, id := range ids {
		if v, ok := w.versions[id]; ok {
			current[id] = v
			continue
		}
		cp, err := w.s.readCheckpoint(ctx, w.tid, w.ns, id)
		if errors.Is(err, checkpoint.ErrNotFound) {
			continue // deleted since the listing
		} else if err != nil {
			return err
		}
		current[id] = cp.ChannelVersions
	}
	w.versions, w.refs = current, map[string]bool{}
	for _, vs := range current {
		for ch, ver := range vs {
			w.refs[checkpoint.Escape(ch)+"/"+checkpoint.Escape(ver)+".bin"] = true
		}
	}
	return nil
}

// used reports whether a value blob (its name under values/) is referenced.
func (w *nsSweep) used(key string) bool { return w.refs[key] }
