package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Serde types of a Value. Other serde types are stored and returned as given.
const (
	// SerdeJSON marks JSON text.
	SerdeJSON = "json"
	// SerdeEmpty marks an absent channel: stored with an empty body, never returned as a
	// value (Tuple.Values omits the channel).
	SerdeEmpty = "empty"
)

// Value is one serialized value: a channel value or a pending write.
type Value struct {
	// SerdeType names the serialization of Data (SerdeJSON, SerdeEmpty, or the caller's own).
	SerdeType string
	// Data is the serialized value.
	Data []byte
}

// Checkpoint is one committed state of a thread in one namespace: which version of each
// channel it holds, plus metadata. Channel values are stored apart, once per version.
type Checkpoint struct {
	// ID identifies the checkpoint; ids sort lexicographically in creation order (NewID).
	ID string
	// ParentID is the checkpoint this one follows; "" for the first.
	ParentID string
	// TS is the creation time, UTC.
	TS time.Time
	// ChannelVersions maps channel name → version (NextVersion).
	ChannelVersions map[string]string
	// Metadata is a JSON object (e.g. {"source":"loop","step":3}); nil means {}.
	Metadata json.RawMessage
}

// Write is one pending write of a task against a checkpoint.
type Write struct {
	// TaskID and TaskPath name the task; Channel the channel written.
	TaskID, TaskPath, Channel string
	// Idx orders the task's writes. Writes with a non-negative index are written once (a
	// second write with the same task id and index is skipped); negative indexes (special
	// writes such as errors and interrupts) overwrite.
	Idx int
	// Value is the written value.
	Value Value
}

// Ref names a checkpoint.
type Ref struct {
	// ThreadID is the thread; NS the namespace ("" is the default); ID the checkpoint ("" means
	// the latest).
	ThreadID, NS, ID string
}

// Tuple is a checkpoint with its channel values and pending writes.
type Tuple struct {
	// ThreadID and NS locate the checkpoint.
	ThreadID, NS string
	// Checkpoint is the checkpoint itself.
	Checkpoint Checkpoint
	// Values maps channel → value at the checkpoint's version; absent channels (SerdeEmpty
	// or never stored) are omitted.
	Values map[string]Value
	// Writes are the pending writes, ordered by task id, then index.
	Writes []Write
}

// ListOptions pages List.
type ListOptions struct {
	// Before keeps only checkpoints whose id sorts before it; "" keeps all.
	Before string
	// Limit caps the result; 0 means no cap.
	Limit int
}

// SweepOptions configures SweepOrphanedValues. The zero value is a dry run with the default
// grace period.
type SweepOptions struct {
	// Delete deletes the orphans found; false (the default) only reports them.
	Delete bool
	// Grace spares values younger than this (a Put in flight writes values before its
	// checkpoint); 0 means DefaultGrace. Negative is refused.
	Grace time.Duration
}

// SweepReport is the outcome of SweepOrphanedValues.
type SweepReport struct {
	// Orphans counts values referenced by no checkpoint and older than the grace period.
	Orphans int
	// Deleted counts the orphans deleted (0 on a dry run).
	Deleted int
	// SkippedNamespaces lists namespaces left alone because a checkpoint could not be read
	// (the sweep fails closed per namespace).
	SkippedNamespaces []string
}

// Defaults of the maintenance operations.
const (
	// DefaultKeep is the usual retention of Prune: the last 20 checkpoints per namespace.
	DefaultKeep = 20
	// DefaultGrace is the default SweepOptions.Grace.
	DefaultGrace = 300 * time.Second
)

// Errors of the Saver contract. Branch with errors.Is.
var (
	// ErrNotFound reports a checkpoint (or a thread's latest checkpoint) that does not exist.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrInvalidArgument reports an argument the contract refuses (an empty id, a name too
	// long for the backend, a negative retention). Nothing was written.
	ErrInvalidArgument = errors.New("checkpoint: invalid argument")
	// ErrTooLarge reports a value above MaxValueBytes. Nothing was written.
	ErrTooLarge = errors.New("checkpoint: value too large")
)

// Saver keeps checkpoints. Implementations are safe for concurrent use; one writer per
// thread is assumed (concurrent Puts on one thread are not ordered).
type Saver interface {
	// Put commits cp in (threadID, ns). values holds the value of each channel whose version
	// in cp.ChannelVersions is new (SerdeEmpty for a channel that is absent); channels
	// without an entry keep the value stored earlier under that version. Values are written
	// before the checkpoint, so a crash leaves no checkpoint pointing at missing values.
	// Returns ErrInvalidArgument (empty ids, a value for a channel cp does not version,
	// names too long), ErrTooLarge.
	Put(ctx context.Context, threadID, ns string, cp Checkpoint, values map[string]Value) error
	// PutWrites stores pending writes against the checkpoint ref names (ref.ID required).
	// Returns ErrInvalidArgument, ErrTooLarge.
	PutWrites(ctx context.Context, ref Ref, writes []Write) error
	// Get returns the checkpoint ref names, or the namespace's latest when ref.ID is "".
	// Returns ErrNotFound.
	Get(ctx context.Context, ref Ref) (Tuple, error)
	// List returns the namespace's checkpoints newest first. An unknown thread has none.
	List(ctx context.Context, threadID, ns string, opts ListOptions) ([]Tuple, error)
	// DeleteThread removes everything of a thread, every namespace. An unknown thread is not
	// an error.
	DeleteThread(ctx context.Context, threadID string) error
	// DeleteBefore removes the checkpoints of (ref.ThreadID, ref.NS) whose id sorts before
	// ref.ID, with their writes, and returns how many. Values stay for SweepOrphanedValues.
	DeleteBefore(ctx context.Context, ref Ref) (int, error)
	// Prune keeps the newest keep checkpoints of (threadID, ns), removes the others (as
	// DeleteBefore) and returns how many. Returns ErrInvalidArgument for keep < 0.
	Prune(ctx context.Context, threadID, ns string, keep int) (int, error)
	// SweepOrphanedValues finds, per namespace of the thread, channel values that no
	// checkpoint references and that are older than the grace period, and deletes them when
	// opts.Delete is set. A namespace with an unreadable checkpoint is skipped whole;
	// before each delete the namespace's checkpoints are listed again. Returns
	// ErrInvalidArgument for a negative grace.
	SweepOrphanedValues(ctx context.Context, threadID string, opts SweepOptions) (SweepReport, error)
}
