package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Status is a thread's status.
type Status string

// Thread statuses.
const (
	// StatusIdle is a thread no run holds, whose last run (if any) succeeded.
	StatusIdle Status = "idle"
	// StatusBusy is a thread a run holds (Acquire).
	StatusBusy Status = "busy"
	// StatusInterrupted is a thread whose last run stopped at an interrupt.
	StatusInterrupted Status = "interrupted"
	// StatusError is a thread whose last run failed.
	StatusError Status = "error"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusIdle, StatusBusy, StatusInterrupted, StatusError:
		return true
	}
	return false
}

// Thread is one thread record.
type Thread struct {
	// ThreadID identifies the thread (printable ASCII, at most 256 characters).
	ThreadID string
	// CreatedAt and UpdatedAt are UTC times. Stores keep at least millisecond precision.
	CreatedAt, UpdatedAt time.Time
	// Metadata is the thread's metadata; nil means null.
	Metadata map[string]any
	// Status is the thread's status.
	Status Status
	// Values is the output of the last successful blocking run as JSON text; nil means null.
	Values json.RawMessage
	// AssistantID is the assistant the thread is bound to; "" means unbound. The binding is
	// permanent.
	AssistantID string
}

// Query selects threads for Search and Count.
type Query struct {
	// Metadata keeps threads whose metadata holds every key with an equal value (JSON
	// equality of the top-level values). Empty keeps all.
	Metadata map[string]any
	// Status keeps threads with that status; "" keeps all.
	Status Status
	// Limit (Search only) caps the result; 0 means no cap. Offset skips that many first.
	Limit, Offset int
}

// Errors of the Store contract. Branch with errors.Is / errors.As.
var (
	// ErrThreadNotFound reports a thread id with no record.
	ErrThreadNotFound = errors.New("threads: thread not found")
	// ErrThreadExists reports a Create for an id that already has a record.
	ErrThreadExists = errors.New("threads: thread already exists")
	// ErrThreadBusy reports an Acquire on a busy thread.
	ErrThreadBusy = errors.New("threads: thread is busy")
	// ErrTooLarge reports a record past MaxValuesBytes or MaxMetadataBytes (CheckSize).
	// Nothing was written.
	ErrTooLarge = errors.New("threads: thread record too large")
	// ErrInvalidArgument reports an argument the contract refuses (an unknown status, a
	// negative age). Nothing was written.
	ErrInvalidArgument = errors.New("threads: invalid argument")
	// ErrStorageFull reports a write that would grow a store holding all it may: the
	// in-memory store's byte budget (MemoryOptions.Budget). Nothing was written.
	ErrStorageFull = errors.New("threads: storage full")
)

// BoundError is returned by Acquire when the thread is bound to another assistant.
type BoundError struct {
	// ThreadID is the thread, Bound its assistant, Requested the one asked for.
	ThreadID, Bound, Requested string
}

// Error names the thread, the assistant it is bound to and the one requested.
func (e *BoundError) Error() string {
	return fmt.Sprintf("threads: thread %q is bound to assistant %q, not %q", e.ThreadID, e.Bound, e.Requested)
}

// Store keeps thread records. Implementations are safe for concurrent use, and their writes
// are atomic per thread.
type Store interface {
	// Create stores a new thread. ThreadID, CreatedAt, UpdatedAt and Status must be set.
	// Returns ErrThreadExists when the id is taken, ErrTooLarge when it does not fit.
	Create(ctx context.Context, t Thread) error
	// Get returns one thread. Returns ErrThreadNotFound.
	Get(ctx context.Context, threadID string) (Thread, error)
	// PatchMetadata merges metadata shallowly into the thread's (new keys win), sets
	// UpdatedAt to now, and returns the stored thread. Returns ErrThreadNotFound,
	// ErrTooLarge.
	PatchMetadata(ctx context.Context, threadID string, metadata map[string]any, now time.Time) (Thread, error)
	// Delete removes a thread. Returns ErrThreadNotFound.
	Delete(ctx context.Context, threadID string) error
	// Search returns the threads matching q, newest CreatedAt first (ties by ThreadID),
	// after Offset, at most Limit.
	Search(ctx context.Context, q Query) ([]Thread, error)
	// Count returns the number of threads matching q (Limit and Offset ignored).
	Count(ctx context.Context, q Query) (int, error)
	// Acquire is the run lock: atomically, it fails with ErrThreadNotFound when the thread
	// is missing, a *BoundError when it is bound to another assistant, ErrThreadBusy when
	// it is busy; otherwise it sets status busy, UpdatedAt to now, binds an unbound thread
	// to assistantID, merges metadata shallowly (new keys win), and returns the thread.
	Acquire(ctx context.Context, threadID, assistantID string, metadata map[string]any, now time.Time) (Thread, error)
	// Release ends a run: it sets the status (idle, error or interrupted), UpdatedAt to now
	// and, when values is non-nil, the thread's values. It does not check who holds the
	// lock. Returns ErrThreadNotFound, ErrTooLarge (then nothing changed),
	// ErrInvalidArgument for a busy or unknown status.
	Release(ctx context.Context, threadID string, status Status, values json.RawMessage, now time.Time) error
	// ResetStaleLocks moves busy threads whose UpdatedAt is older than now-olderThan to
	// status to (idle or error), one atomic update per thread, and returns how many moved.
	// Returns ErrInvalidArgument for another target status or a negative age. Meant for a
	// timer-triggered sweep after a host crashed mid-run.
	ResetStaleLocks(ctx context.Context, olderThan time.Duration, to Status, now time.Time) (int, error)
}

// MergeMetadata returns base with patch merged shallowly (patch wins). It returns base itself
// when patch is empty, and never modifies its arguments.
func MergeMetadata(base, patch map[string]any) map[string]any {
	if len(patch) == 0 {
		return base
	}
	out := make(map[string]any, len(base)+len(patch))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range patch {
		out[k] = v
	}
	return out
}

// Matches reports whether t is selected by q's status and metadata filters.
func (q Query) Matches(t Thread) bool {
	if q.Status != "" && t.Status != q.Status {
		return false
	}
	for k, want := range q.Metadata {
		got, ok := t.Metadata[k]
		if !ok || !jsonEqual(got, want) {
			return false
		}
	}
	return true
}

// CheckResetArgs validates the arguments of ResetStaleLocks.
func CheckResetArgs(olderThan time.Duration, to Status) error {
	if olderThan < 0 {
		return fmt.Errorf("%w: older_than must not be negative", ErrInvalidArgument)
	}
	if to != StatusIdle && to != StatusError {
		return fmt.Errorf("%w: reset status must be idle or error, got %q", ErrInvalidArgument, to)
	}
	return nil
}

// CheckReleaseStatus validates the status given to Release.
func CheckReleaseStatus(s Status) error {
	if s == StatusBusy || !s.Valid() {
		return fmt.Errorf("%w: release status must be idle, error or interrupted, got %q", ErrInvalidArgument, s)
	}
	return nil
}

// jsonEqual compares two JSON-compatible values by their canonical encoding (encoding/json
// sorts map keys), so 1 and 1.0 decoded from JSON compare equal.
func jsonEqual(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}
