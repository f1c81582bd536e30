package engine_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// otherInstance returns another engine over r's storage, as another instance of the app.
func otherInstance(t *testing.T, r *rig) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Options{Registry: r.reg, Store: r.store, Queue: r.queue, Payloads: r.payloads, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestEngine_SharedKey_OneKeyPerStore: engines over one store get one random key per name,
// however many ask at once; an engine reads it once; another store has another key.
func TestEngine_SharedKey_OneKeyPerStore(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	engines := []*engine.Engine{r.e}
	for range 7 {
		engines = append(engines, otherInstance(t, r))
	}
	keys := make([][]byte, len(engines))
	var wg sync.WaitGroup
	for i, e := range engines {
		wg.Go(func() {
			k, err := e.SharedKey(context.Background(), "token")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i, k := range keys {
		if len(k) != engine.SharedKeySize || !bytes.Equal(k, keys[0]) {
			t.Fatalf("engine %d's key %x, engine 0's %x: want one %d-byte key", i, k, keys[0], engine.SharedKeySize)
		}
	}
	r.counts.Reset()
	if k, err := r.e.SharedKey(t.Context(), "token"); err != nil || !bytes.Equal(k, keys[0]) || r.counts.Table() != 0 {
		t.Errorf("again: %x %v after %d operations; want the same key from memory", k, err, r.counts.Table())
	}
	if k, err := r.e.SharedKey(t.Context(), "another"); err != nil || bytes.Equal(k, keys[0]) {
		t.Errorf("another name: %x %v; want another key", k, err)
	}
	if k, err := newRig(t, engine.Options{}, false).e.SharedKey(t.Context(), "token"); err != nil || bytes.Equal(k, keys[0]) {
		t.Errorf("another store: %x %v; want another key", k, err)
	}
}

// TestEngine_SharedKey_StorageDecides: an insert that meets another instance's key, or whose
// answer is lost after it landed, returns what the store holds; a row that holds no key is an
// error and stays as it is; a name no row key can be is refused before any storage call.
func TestEngine_SharedKey_StorageDecides(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	insertKey := func(ops []engine.Op) bool {
		return ops[0].Kind == engine.OpInsert && ops[0].Entity.PartitionKey == "§keys"
	}

	r := newRig(t, engine.Options{}, false)
	theirs := bytes.Repeat([]byte{7}, engine.SharedKeySize)
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertKey(ops) { // another instance inserts its key first
			_, err := r.store.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "§keys", RowKey: ops[0].Entity.RowKey, Properties: map[string]any{"Key": theirs}}}})
			if err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	if k, err := r.e.SharedKey(ctx, "lost-race"); err != nil || !bytes.Equal(k, theirs) {
		t.Errorf("after losing the insert: %x %v; want the stored key", k, err)
	}

	r = newRig(t, engine.Options{}, false)
	var inserted []byte
	r.fstore.BeforeSubmit = func(ops []engine.Op) error {
		if insertKey(ops) { // the insert lands, its answer is lost
			inserted = ops[0].Entity.Properties["Key"].([]byte)
			if _, err := r.store.Submit(ctx, ops); err != nil {
				t.Error(err)
			}
			return enginetest.ErrInjected
		}
		return nil
	}
	if k, err := r.e.SharedKey(ctx, "lost-answer"); err != nil || !bytes.Equal(k, inserted) {
		t.Errorf("after a lost answer: %x %v; want the key that landed %x", k, err, inserted)
	}

	r = newRig(t, engine.Options{}, false)
	junk := engine.Entity{PartitionKey: "§keys", RowKey: "junk", Properties: map[string]any{"Key": "not bytes"}}
	if _, err := r.store.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: junk}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.e.SharedKey(ctx, "junk"); !errors.Is(err, engine.ErrInvalidEntity) {
		t.Errorf("a row without a key: %v, want ErrInvalidEntity", err)
	}
	if ent, err := r.store.Get(ctx, "§keys", "junk"); err != nil || ent.Properties["Key"] != "not bytes" {
		t.Errorf("the row without a key was changed: %v %v", ent.Properties, err)
	}
	r.counts.Reset()
	for _, name := range []string{"", "a/b", "tab\t"} {
		if _, err := r.e.SharedKey(ctx, name); !errors.Is(err, engine.ErrInvalidEntity) {
			t.Errorf("name %q: %v, want ErrInvalidEntity", name, err)
		}
	}
	if n := r.counts.Table(); n != 0 {
		t.Errorf("bad names cost %d storage operations", n)
	}
}
