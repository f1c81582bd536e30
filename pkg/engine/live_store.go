package engine

import (
	"context"
	"fmt"
)

// LiveStore keeps the live channels of runs: per key an append-only log of bytes, addressed by
// byte offset, written by conditional appends. A writer appends at the length it last saw and
// learns from ErrConflict that it is not the log's only writer (or that its own earlier try
// landed); a reader keeps the offset it has read up to and resumes there, on any instance.
//
// Keys follow the payload key rules (CheckPayloadKey). The engine names a run's log
// "<run id>/<run nonce>/live", under the run's payload prefix: purging a run deletes its logs
// with DeletePrefix of the same prefix it gives PayloadStore.DeletePrefix. A LiveStore keeps
// its logs apart from the payloads (its own container on Azure), so neither store's
// DeletePrefix touches the other's keys.
//
// A log is not history: it holds what a step wrote while it ran, which the step's commit
// supersedes. The bounds are per log (MaxLiveAppendBytes, MaxLiveBytes, MaxLiveAppends) and
// every implementation enforces them, so a log that is legal in memory is legal on Azure.
//
// Implementations must be safe for concurrent use, and never retain or return the caller's
// byte slices.
type LiveStore interface {
	// Append writes data at the end of the log key if the log's length is at (0: the log may
	// not exist yet; it is created) and returns the new length, at+len(data). Errors:
	//   - ErrConflict: the log's length is not at — another writer appended first, or an
	//     earlier try of this very append landed although its answer was lost (a backend that
	//     retries, as the Azure SDK does, meets its own append this way): the caller reads from
	//     at to tell, so records should carry what identifies their writer;
	//   - ErrNotFound: at > 0 and there is no log (it was deleted, or never written);
	//   - ErrTooLarge (a *LimitError): data above MaxLiveAppendBytes, at+len(data) above
	//     MaxLiveBytes, or the log holds MaxLiveAppends appends already (whatever at);
	//   - ErrInvalidEntity: a bad key, empty data, or at < 0;
	//   - ErrStorageFull: a store with a budget holds all it may (memory.WithBudget).
	//
	// ErrTooLarge, ErrInvalidEntity and ErrStorageFull say that nothing was written. Any other
	// error leaves the outcome unknown, as Store.Submit's: read from at to tell.
	Append(ctx context.Context, key string, at int64, data []byte) (int64, error)

	// Read returns at most max bytes of the log key from offset from (fewer at its end), and
	// the log's length. from == length returns no bytes and no error. Errors: ErrNotFound (no
	// log, or a bad key); ErrInvalidQuery for from < 0, from > length or max <= 0.
	Read(ctx context.Context, key string, from int64, max int) (data []byte, length int64, err error)

	// Length returns the log's length: one cheap call, what a reader on another instance polls
	// before it reads. A log whose creation landed but whose first append did not may exist
	// with length 0. Errors: ErrNotFound (no log, or a bad key).
	Length(ctx context.Context, key string) (int64, error)

	// DeletePrefix deletes every log whose key starts with prefix and returns how many it
	// deleted. A prefix that matches nothing is not an error. Errors: ErrInvalidEntity for an
	// empty prefix.
	DeletePrefix(ctx context.Context, prefix string) (int, error)
}

// Limits of one live log, those of an Azure append blob where Azure has one (Azurite accepts
// larger blocks; every LiveStore enforces these itself).
const (
	// MaxLiveAppendBytes is the most bytes of one Append (Azure's append block: 4 MiB).
	MaxLiveAppendBytes = 4 << 20
	// MaxLiveAppends is the most appends one log takes (Azure's 50 000 blocks of an append
	// blob). A writer that coalesces its chunks into a few appends a second stays far below
	// it: at 5 appends a second, 50 000 last close to three hours.
	MaxLiveAppends = 50_000
	// MaxLiveBytes is the most bytes one log holds (64 MiB, MaxPayloadBytes): far above what
	// a run streams (1 000 model tokens are a few KiB), and small enough that a reader that
	// catches up from offset 0 reads no more than one payload read may.
	MaxLiveBytes = 64 << 20
)

// ValidateLiveAppend checks an Append's arguments against the LiveStore rules that need no
// storage: the key (CheckPayloadKey), at >= 0, data neither empty nor above MaxLiveAppendBytes,
// and at+len(data) within MaxLiveBytes. Errors wrap ErrInvalidEntity or are a *LimitError
// (ErrTooLarge).
func ValidateLiveAppend(key string, at int64, data []byte) error {
	if err := CheckPayloadKey(key); err != nil {
		return err
	}
	switch {
	case at < 0:
		return fmt.Errorf("%w: append at %d", ErrInvalidEntity, at)
	case len(data) == 0:
		return fmt.Errorf("%w: empty append", ErrInvalidEntity)
	case len(data) > MaxLiveAppendBytes:
		return &LimitError{Limit: "live append", Key: key, Size: len(data), Max: MaxLiveAppendBytes}
	case at > MaxLiveBytes-int64(len(data)):
		return &LimitError{Limit: "live log", Key: key, Size: int(min(at, 1<<61) + int64(len(data))), Max: MaxLiveBytes}
	}
	return nil
}

// ValidateLiveRead checks a Read's arguments that need no storage: from >= 0 and max > 0.
// Errors wrap ErrInvalidQuery.
func ValidateLiveRead(from int64, max int) error {
	switch {
	case from < 0:
		return fmt.Errorf("%w: read from %d", ErrInvalidQuery, from)
	case max <= 0:
		return fmt.Errorf("%w: read at most %d bytes", ErrInvalidQuery, max)
	}
	return nil
}
