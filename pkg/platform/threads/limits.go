package threads

import (
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Limits of a thread record. Every Store enforces them, the in-memory one included, so a
// thread that works in memory works on Azure: a write past them fails with ErrTooLarge and
// changes nothing.
const (
	// MaxValuesBytes caps Values (its JSON text as given). Azure keeps large values in a
	// blob, so this bounds what one read holds in memory, not a table entity.
	MaxValuesBytes = 16 << 20
	// MaxMetadataBytes caps Metadata, measured as StoredJSON writes it (json.dumps style,
	// non-ASCII escaped). Search reads the metadata of every thread, so it stays in the
	// record: on Azure one table entity (1 MiB, UTF-16) holds it with room to spare.
	MaxMetadataBytes = 256 << 10
)

// StoredJSON renders a JSON value as stores keep it: json.dumps style, ASCII only (every
// non-ASCII character escaped as \uXXXX).
func StoredJSON(raw json.RawMessage) []byte { return pyjson.AppendReformat(nil, raw) }

// MetadataJSON returns StoredJSON of m, or "null" for nil.
func MetadataJSON(m map[string]any) ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return StoredJSON(b), nil
}

// CheckSize returns ErrTooLarge when t's values or metadata are past MaxValuesBytes or
// MaxMetadataBytes.
func CheckSize(t Thread) error {
	if len(t.Values) > MaxValuesBytes {
		return fmt.Errorf("thread %q: values of %d bytes (max %d): %w", t.ThreadID, len(t.Values), MaxValuesBytes, ErrTooLarge)
	}
	meta, err := MetadataJSON(t.Metadata)
	if err != nil {
		return err
	}
	if len(meta) > MaxMetadataBytes {
		return fmt.Errorf("thread %q: metadata of %d bytes (max %d): %w", t.ThreadID, len(meta), MaxMetadataBytes, ErrTooLarge)
	}
	return nil
}
