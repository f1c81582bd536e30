package blobcheckpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// DefaultContainer is the container Open uses when none is given.
const DefaultContainer = "langgraph-checkpoints"

// latestAttempts bounds the compare-and-swap retries of latest.json.
const latestAttempts = 5

// Options configures Open and New. The zero value means the defaults.
type Options struct {
	// Container is the container name; "" means DefaultContainer.
	Container string
	// Logger receives maintenance logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of the sweep's grace period; nil means time.Now.
	Now func() time.Time
}

// Saver is a checkpoint.Saver on one blob container. Safe for concurrent use.
type Saver struct {
	c      *container.Client
	logger *slog.Logger
	now    func() time.Time
}

var _ checkpoint.Saver = (*Saver)(nil)

// Open returns a saver on the container opts.Container of clients' account, creating the
// container if missing. Its error names the container (from azure.Clients.EnsureContainer).
func Open(ctx context.Context, clients *azure.Clients, opts Options) (*Saver, error) {
	if opts.Container == "" {
		opts.Container = DefaultContainer
	}
	c, err := clients.EnsureContainer(ctx, opts.Container)
	if err != nil {
		return nil, err
	}
	return New(c, opts), nil
}

// New returns a saver on an existing container client (azure.Clients.EnsureContainer
// creates one). opts.Container is ignored.
func New(c *container.Client, opts Options) *Saver {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Saver{c: c, logger: opts.Logger, now: opts.Now}
}

// stored is the content of checkpoint.bin (serde type json).
type stored struct {
	V               int               `json:"v"`
	ID              string            `json:"id"`
	TS              time.Time         `json:"ts"`
	ChannelVersions map[string]string `json:"channel_versions"`
}

// Put implements checkpoint.Saver: values, metadata, checkpoint.bin, then latest.json.
func (s *Saver) Put(ctx context.Context, threadID, ns string, cp checkpoint.Checkpoint, values map[string]checkpoint.Value) error {
	if err := checkpoint.CheckPut(threadID, ns, cp, values); err != nil {
		return fmt.Errorf("put checkpoint: %w", err)
	}
	for _, ch := range slices.Sorted(maps.Keys(values)) {
		v := values[ch]
		if err := s.upload(ctx, valueBlob(threadID, ns, ch, cp.ChannelVersions[ch]), v.Data, meta(metaSerdeType, v.SerdeType), nil); err != nil {
			return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
		}
	}
	md := cp.Metadata
	if len(md) == 0 {
		md = json.RawMessage("{}")
	}
	if err := s.upload(ctx, metadataBlob(threadID, ns, cp.ID), md, meta(metaSerdeType, checkpoint.SerdeJSON), nil); err != nil {
		return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
	}
	versions := cp.ChannelVersions
	if versions == nil {
		versions = map[string]string{}
	}
	body, err := json.Marshal(stored{V: 1, ID: cp.ID, TS: cp.TS.UTC(), ChannelVersions: versions})
	if err != nil {
		return fmt.Errorf("put checkpoint %s: encode: %w", cp.ID, err)
	}
	if err := s.upload(ctx, checkpointBlob(threadID, ns, cp.ID), body,
		meta(metaSerdeType, checkpoint.SerdeJSON, metaParentID, cp.ParentID), nil); err != nil {
		return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
	}
	if err := s.moveLatest(ctx, threadID, ns, cp.ID); err != nil {
		return fmt.Errorf("put checkpoint %s: %w", cp.ID, err)
	}
	return nil
}

type latest struct {
	CheckpointID string `json:"checkpoint_id"`
}

// moveLatest points latest.json at id unless it already names a later id: read it with its
// ETag, then write with If-Match (If-None-Match: * when absent), retrying on a lost race.
func (s *Saver) moveLatest(ctx context.Context, threadID, ns, id string) error {
	name := latestBlob(threadID, ns)
	body, _ := json.Marshal(latest{CheckpointID: id})
	for range latestAttempts {
		cur, etag, err := s.readLatest(ctx, threadID, ns)
		cond := &blob.ModifiedAccessConditions{IfMatch: &etag}
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
			any := azcore.ETagAny
			cond = &blob.ModifiedAccessConditions{IfNoneMatch: &any}
		case err != nil:
			return err
		case cur > id:
			return nil
		}
		err = s.upload(ctx, name, body, meta(metaSerdeType, checkpoint.SerdeJSON), cond)
		if !errors.Is(err, errConflict) {
			return err
		}
	}
	return fmt.Errorf("move %s: lost %d races", name, latestAttempts)
}

// readLatest returns the hint's id and ETag. A malformed hint reads as an empty id.
func (s *Saver) readLatest(ctx context.Context, threadID, ns string) (string, azcore.ETag, error) {
	data, _, etag, err := s.download(ctx, latestBlob(threadID, ns))
	if err != nil {
		return "", "", err
	}
	var l latest
	_ = json.Unmarshal(data, &l)
	return l.CheckpointID, etag, nil
}

// PutWrites implements checkpoint.Saver. Writes with a non-negative index are created with
// If-None-Match: *, so an existing one is kept.
func (s *Saver) PutWrites(ctx context.Context, ref checkpoint.Ref, writes []checkpoint.Write) error {
	if err := checkpoint.CheckWrites(ref, writes); err != nil {
		return fmt.Errorf("put writes: %w", err)
	}
	for _, w := range writes {
		var cond *blob.ModifiedAccessConditions
		if w.Idx >= 0 {
			any := azcore.ETagAny
			cond = &blob.ModifiedAccessConditions{IfNoneMatch: &any}
		}
		md := meta(metaSerdeType, w.Value.SerdeType, metaChannel, w.Channel, metaTaskID, w.TaskID, metaTaskPath, w.TaskPath)
		err := s.upload(ctx, writeBlob(ref.ThreadID, ref.NS, ref.ID, w.TaskID, w.Idx), w.Value.Data, md, cond)
		if err != nil && !errors.Is(err, errConflict) {
			return fmt.Errorf("put writes of checkpoint %s: %w", ref.ID, err)
		}
	}
	return nil
}

// Get implements checkpoint.Saver: an explicit id, else the latest.json hint, else a prefix
// scan.
func (s *Saver) Get(ctx context.Context, ref checkpoint.Ref) (checkpoint.Tuple, error) {
	if err := checkpoint.CheckNames(ref.ThreadID, ref.NS); err != nil {
		return checkpoint.Tuple{}, fmt.Errorf("get checkpoint: %w: %w", checkpoint.ErrNotFound, err)
	}
	if ref.ID != "" {
		return s.read(ctx, ref.ThreadID, ref.NS, ref.ID)
	}
	id, _, err := s.readLatest(ctx, ref.ThreadID, ref.NS)
	switch {
	case err == nil && id != "":
		tp, err := s.read(ctx, ref.ThreadID, ref.NS, id)
		if !errors.Is(err, checkpoint.ErrNotFound) {
			return tp, err
		}
	case err != nil && !errors.Is(err, checkpoint.ErrNotFound):
		return checkpoint.Tuple{}, fmt.Errorf("get latest checkpoint: %w", err)
	}
	ids, err := s.committed(ctx, ref.ThreadID, ref.NS)
	if err != nil {
		return checkpoint.Tuple{}, fmt.Errorf("get latest checkpoint: %w", err)
	}
	for _, id := range ids {
		tp, err := s.read(ctx, ref.ThreadID, ref.NS, id)
		if !errors.Is(err, checkpoint.ErrNotFound) {
			return tp, err
		}
	}
	return checkpoint.Tuple{}, fmt.Errorf("get latest checkpoint of thread %q: %w", ref.ThreadID, checkpoint.ErrNotFound)
}

// committed returns the ids of the namespace's committed checkpoints, newest first.
func (s *Saver) committed(ctx context.Context, threadID, ns string) ([]string, error) {
	prefix := checkpointsPrefix(threadID, ns)
	items, err := s.list(ctx, prefix, false)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, it := range items {
		if id, ok := committedID(prefix, it.name); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids, nil
}

// read loads one committed checkpoint with its values and writes. Returns
// checkpoint.ErrNotFound when checkpoint.bin is missing.
func (s *Saver) read(ctx context.Context, threadID, ns, id string) (checkpoint.Tuple, error) {
	cp, err := s.readCheckpoint(ctx, threadID, ns, id)
	if err != nil {
		return checkpoint.Tuple{}, err
	}
	md, _, _, err := s.download(ctx, metadataBlob(threadID, ns, id))
	if err != nil {
		return checkpoint.Tuple{}, fmt.Errorf("get checkpoint %s: metadata: %w", id, err)
	}
	cp.Metadata = md
	tp := checkpoint.Tuple{ThreadID: threadID, NS: ns, Checkpoint: cp, Values: map[string]checkpoint.Value{}}
	for _, ch := range slices.Sorted(maps.Keys(cp.ChannelVersions)) {
		data, m, _, err := s.download(ctx, valueBlob(threadID, ns, ch, cp.ChannelVersions[ch]))
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
			continue
		case err != nil:
			return checkpoint.Tuple{}, fmt.Errorf("get checkpoint %s: %w", id, err)
		}
		if st := metaValue(m, metaSerdeType); st != checkpoint.SerdeEmpty {
			tp.Values[ch] = checkpoint.Value{SerdeType: st, Data: data}
		}
	}
	if tp.Writes, err = s.readWrites(ctx, threadID, ns, id); err != nil {
		return checkpoint.Tuple{}, fmt.Errorf("get checkpoint %s: %w", id, err)
	}
	return tp, nil
}

// readCheckpoint reads and decodes checkpoint.bin.
func (s *Saver) readCheckpoint(ctx context.Context, threadID, ns, id string) (checkpoint.Checkpoint, error) {
	data, m, _, err := s.download(ctx, checkpointBlob(threadID, ns, id))
	if err != nil {
		return checkpoint.Checkpoint{}, fmt.Errorf("get checkpoint %s: %w", id, err)
	}
	var st stored
	if err := json.Unmarshal(data, &st); err != nil || st.V != 1 {
		return checkpoint.Checkpoint{}, fmt.Errorf("get checkpoint %s: malformed checkpoint.bin", id)
	}
	if st.ChannelVersions == nil {
		st.ChannelVersions = map[string]string{}
	}
	return checkpoint.Checkpoint{ID: id, ParentID: metaValue(m, metaParentID), TS: st.TS.UTC(), ChannelVersions: st.ChannelVersions}, nil
}

func (s *Saver) readWrites(ctx context.Context, threadID, ns, id string) ([]checkpoint.Write, error) {
	prefix := writesPrefix(threadID, ns, id)
	items, err := s.list(ctx, prefix, true)
	if err != nil {
		return nil, err
	}
	var out []checkpoint.Write
	for _, it := range items {
		rest := strings.TrimPrefix(it.name, prefix)
		_, file, ok := strings.Cut(rest, "/")
		idx, err := strconv.Atoi(strings.TrimSuffix(file, ".bin"))
		if !ok || err != nil {
			continue
		}
		data, _, _, err := s.download(ctx, it.name)
		if errors.Is(err, checkpoint.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, checkpoint.Write{
			TaskID: metaValue(it.meta, metaTaskID), TaskPath: metaValue(it.meta, metaTaskPath),
			Channel: metaValue(it.meta, metaChannel), Idx: idx,
			Value: checkpoint.Value{SerdeType: metaValue(it.meta, metaSerdeType), Data: data},
		})
	}
	checkpoint.SortWrites(out)
	return out, nil
}

// List implements checkpoint.Saver.
func (s *Saver) List(ctx context.Context, threadID, ns string, opts checkpoint.ListOptions) ([]checkpoint.Tuple, error) {
	if err := checkpoint.CheckNames(threadID, ns); err != nil {
		return nil, nil
	}
	ids, err := s.committed(ctx, threadID, ns)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var out []checkpoint.Tuple
	for _, id := range ids {
		if opts.Before != "" && id >= opts.Before {
			continue
		}
		tp, err := s.read(ctx, threadID, ns, id)
		if errors.Is(err, checkpoint.ErrNotFound) {
			continue // deleted since the listing
		} else if err != nil {
			return nil, fmt.Errorf("list checkpoints: %w", err)
		}
		out = append(out, tp)
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
	}
	return out, nil
}
