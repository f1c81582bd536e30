package engine

import "context"

// PayloadStore keeps values too large for a table property (state, event payloads, outputs)
// as blobs; the row keeps the key as a reference. Keys are "<run id>/<run nonce>/<name>",
// so the payloads of one run share a prefix that no other run (an earlier or later run of
// the same id included) extends.
//
// Implementations must be safe for concurrent use.
type PayloadStore interface {
	// Put stores data under key, replacing any previous value. Errors: ErrTooLarge above
	// MaxPayloadBytes; ErrInvalidEntity for an empty key; ErrStorageFull when the store holds
	// all it may (then the previous value is kept).
	Put(ctx context.Context, key string, data []byte) error

	// Get returns the data stored under key. Errors: ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)

	// DeletePrefix deletes every payload whose key starts with prefix and returns how many it
	// deleted. A prefix that matches nothing is not an error. Errors: ErrInvalidEntity for an
	// empty prefix.
	DeletePrefix(ctx context.Context, prefix string) (int, error)
}

// MaxPayloadBytes is the largest payload the engine writes (64 MiB).
const MaxPayloadBytes = 64 << 20
