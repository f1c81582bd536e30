package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
)

// Shared keys. A secret every engine over one store must agree on (the key the runs API signs
// its continuation tokens with) is a row of its own, named by its use:
//
//	PartitionKey  "§keys"   (no instance id holds '§', so no run's partition)
//	RowKey        <name>
//	Properties    Key: SharedKeySize random bytes
//
// The first engine that needs a key inserts a random one. An insert that meets the row —
// another instance got there first, or a retry met this insert's own first try — and an
// insert whose outcome is unknown read what is stored: storage decides which key is the key,
// and every instance reads the same one. An engine keeps what it read for its lifetime, so a
// key costs one read per process (and one insert, once per store). Nothing else reads or
// writes the row, so nothing periodic touches it. To rotate a key, delete its row and restart
// every instance; whatever was signed with the old key is then refused.
const (
	keysPartition = "§keys"
	pKey          = "Key"
)

// SharedKeySize is the length in bytes of a key SharedKey returns.
const SharedKeySize = 32

// keyCache holds the shared keys an engine has read, by name.
type keyCache struct {
	mu   sync.Mutex
	keys map[string][]byte // guarded by mu
}

// SharedKey returns the secret key named name that every engine over the same store shares
// (SharedKeySize bytes; the caller must not modify them): created at random by the first
// engine that asks, read by every other, and kept in memory once read. name is 1–256
// printable ASCII characters without / \ # ?. A key lives in the store, so whoever can read
// the store can read it. Errors: ErrInvalidEntity (wrapped) for a bad name or a stored row
// that holds no key of SharedKeySize bytes, which is left as it is; a storage error.
func (e *Engine) SharedKey(ctx context.Context, name string) ([]byte, error) {
	if !storableInstanceID(name) {
		return nil, fmt.Errorf("shared key %q: %w: bad name", name, ErrInvalidEntity)
	}
	e.sharedKeys.mu.Lock()
	k, ok := e.sharedKeys.keys[name]
	e.sharedKeys.mu.Unlock()
	if ok {
		return k, nil
	}
	k, err := e.loadSharedKey(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("shared key %s: %w", name, err)
	}
	e.sharedKeys.mu.Lock()
	defer e.sharedKeys.mu.Unlock()
	if e.sharedKeys.keys == nil {
		e.sharedKeys.keys = map[string][]byte{}
	}
	e.sharedKeys.keys[name] = k // every read returns the stored key: a concurrent load read the same
	return k, nil
}

// loadSharedKey reads the key row name, inserting a random key first when there is none.
func (e *Engine) loadSharedKey(ctx context.Context, name string) ([]byte, error) {
	k, err := e.readSharedKey(ctx, name)
	if !errors.Is(err, ErrNotFound) {
		return k, err
	}
	fresh := make([]byte, SharedKeySize)
	_, _ = rand.Read(fresh) // never fails (crypto/rand)
	_, err = e.store.Submit(ctx, []Op{{Kind: OpInsert, Entity: Entity{PartitionKey: keysPartition, RowKey: name, Properties: map[string]any{pKey: fresh}}}})
	if err == nil {
		return fresh, nil
	}
	if refused(err) {
		return nil, err
	}
	// The row exists (another engine's key, or this insert's own first try), or the outcome
	// is unknown: what is stored is the key.
	k, rerr := e.readSharedKey(ctx, name)
	if rerr != nil {
		return nil, fmt.Errorf("%w (then read: %v)", err, rerr)
	}
	return k, nil
}

// readSharedKey reads the key row name. Errors: ErrNotFound (wrapped) when there is none.
func (e *Engine) readSharedKey(ctx context.Context, name string) ([]byte, error) {
	ent, err := e.store.Get(ctx, keysPartition, name)
	if err != nil {
		return nil, err
	}
	k, ok := ent.Properties[pKey].([]byte)
	if !ok || len(k) != SharedKeySize {
		return nil, fmt.Errorf("%w: the row %s/%s holds no %d-byte key", ErrInvalidEntity, keysPartition, name, SharedKeySize)
	}
	return k, nil
}
