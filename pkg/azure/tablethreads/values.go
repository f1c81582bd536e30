package tablethreads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// inlineValuesUnits is the most UTF-16 units of stored values text kept in the entity (128
// KiB); longer values go to a blob of the values container, so that values up to
// threads.MaxValuesBytes never push the entity past 1 MiB (metadata, at most
// threads.MaxMetadataBytes, takes at most 512 KiB of it).
const inlineValuesUnits = 64 << 10

// storedValues says where an entity's values are: inline text ("null" for none) or ref, the
// name of the blob that holds them.
type storedValues struct {
	inline, ref string
}

// valuesPrefix is where the blobs of one thread's values live.
func valuesPrefix(tid string) string { return "threads/" + checkpoint.Escape(tid) + "/" }

// valuesContainer is the default Options.Container for a table: its lower-cased name (cut to
// fit) and "-values".
func valuesContainer(table string) string {
	name := strings.ToLower(table)
	if len(name) > 56 {
		name = name[:56]
	}
	return name + "-values"
}

// place returns where t's values go, uploading them to a new blob when they are too long for
// the entity (created reports the upload, for cleanup if the write then fails).
func (s *Store) place(ctx context.Context, t threads.Thread) (v storedValues, created bool, err error) {
	if t.Values == nil {
		return storedValues{inline: "null"}, false, nil
	}
	text := threads.StoredJSON(t.Values)
	if utf16Len(string(text)) <= inlineValuesUnits {
		return storedValues{inline: string(text)}, false, nil
	}
	ref := valuesPrefix(t.ThreadID) + "values-" + uuid.NewString() + ".json"
	if err := s.values.Put(ctx, ref, text); err != nil {
		return storedValues{}, false, fmt.Errorf("store values of thread %q: %w", t.ThreadID, err)
	}
	return storedValues{ref: ref}, true, nil
}

// load reads the spilled values of t from ref into t.Values. errValuesGone reports a blob
// deleted meanwhile by a writer that replaced the values: read the entity again.
func (s *Store) load(ctx context.Context, t *threads.Thread, ref string) error {
	if ref == "" {
		return nil
	}
	b, err := s.values.Get(ctx, ref)
	if errors.Is(err, engine.ErrNotFound) {
		return errValuesGone
	}
	if err != nil {
		return fmt.Errorf("read values of thread %q: %w", t.ThreadID, err)
	}
	t.Values = json.RawMessage(b)
	return nil
}

// errValuesGone is a values blob deleted between reading the entity and reading the blob.
var errValuesGone = errors.New("tablethreads: values blob replaced meanwhile")

// drop deletes a values blob no entity refers to any more; a failure only leaves an orphan,
// which Delete of the thread removes.
func (s *Store) drop(ctx context.Context, tid, ref string) {
	if ref == "" {
		return
	}
	if _, err := s.values.DeletePrefix(context.WithoutCancel(ctx), ref); err != nil {
		s.logger.Warn("delete replaced thread values", "thread_id", tid, "error", err)
	}
}
