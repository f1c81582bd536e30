package enginetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// The Azure Table limits every Store must enforce (the service's documented limits).

func storeBatchOpCount(t *testing.T, s engine.Store) {
	pk := UniqueKey("ops")
	ops := make([]engine.Op, 101)
	for i := range ops {
		ops[i] = insert(pk, fmt.Sprintf("r%03d", i), map[string]any{"V": int64(i)})
	}
	_, err := s.Submit(ctxOf(t), ops)
	wantErr(t, err, engine.ErrTooLarge)
	mustSubmit(t, s, ops[:100]...)
	page, err := s.Query(ctxOf(t), engine.Query{PartitionKey: pk})
	if err != nil || len(page.Entities) != 100 {
		t.Fatalf("after a 100-op batch: %d rows, err %v", len(page.Entities), err)
	}
}

func storeStringLimit(t *testing.T, s engine.Store) {
	pk := UniqueKey("str")
	cases := []struct {
		name  string
		value string
		ok    bool
	}{
		{"32768 ASCII", strings.Repeat("a", 32768), true},
		{"32769 ASCII", strings.Repeat("a", 32769), false},
		{"16384 surrogate pairs", strings.Repeat("😀", 16384), true},
		{"16384 pairs + 1", strings.Repeat("😀", 16384) + "a", false},
		{"32768 BMP non-ASCII", strings.Repeat("é", 32768), true},
	}
	for i, c := range cases {
		_, err := s.Submit(ctxOf(t), []engine.Op{insert(pk, fmt.Sprintf("r%d", i), map[string]any{"S": c.value})})
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && !errors.Is(err, engine.ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", c.name, err)
		}
	}
}

func storeBinaryLimit(t *testing.T, s engine.Store) {
	pk := UniqueKey("bin")
	mustSubmit(t, s, insert(pk, "ok", map[string]any{"B": make([]byte, 65536)}))
	_, err := s.Submit(ctxOf(t), []engine.Op{insert(pk, "big", map[string]any{"B": make([]byte, 65537)})})
	wantErr(t, err, engine.ErrTooLarge)
}

func storePropertyCount(t *testing.T, s engine.Store) {
	pk := UniqueKey("props")
	props := func(n int) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprintf("P%03d", i)] = int64(i)
		}
		return m
	}
	mustSubmit(t, s, insert(pk, "ok", props(252)))
	_, err := s.Submit(ctxOf(t), []engine.Op{insert(pk, "big", props(253))})
	wantErr(t, err, engine.ErrTooLarge)
}

func storeEntitySize(t *testing.T, s engine.Store) {
	pk := UniqueKey("ent")
	props := map[string]any{}
	for i := range 17 { // 17 × 64 000 bytes > 1 MiB
		props[fmt.Sprintf("P%d", i)] = strings.Repeat("x", 32000)
	}
	_, err := s.Submit(ctxOf(t), []engine.Op{insert(pk, "big", props)})
	wantErr(t, err, engine.ErrTooLarge)
	delete(props, "P16")
	delete(props, "P15")
	mustSubmit(t, s, insert(pk, "ok", props)) // 15 × 64 000 bytes < 1 MiB
}

func storeBatchSize(t *testing.T, s engine.Store) {
	pk := UniqueKey("batch")
	big := map[string]any{}
	for i := range 15 {
		big[fmt.Sprintf("P%d", i)] = strings.Repeat("y", 32000)
	}
	ops := make([]engine.Op, 5) // 5 × ~960 KB > 4 MiB
	for i := range ops {
		ops[i] = insert(pk, fmt.Sprintf("r%d", i), big)
	}
	_, err := s.Submit(ctxOf(t), ops)
	wantErr(t, err, engine.ErrTooLarge)
	if _, err := s.Get(ctxOf(t), pk, "r0"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("an oversized batch wrote a row: %v", err)
	}
}

func storeKeys(t *testing.T, s engine.Store) {
	pk := UniqueKey("keys")
	for _, rk := range []string{"a/b", `a\b`, "a#b", "a?b", "a\x01b", "a\x7fb", "", strings.Repeat("k", 1025)} {
		if _, err := s.Submit(ctxOf(t), []engine.Op{insert(pk, rk, map[string]any{"V": int64(1)})}); err == nil {
			t.Errorf("row key %q accepted", rk)
		}
		if _, err := s.Submit(ctxOf(t), []engine.Op{insert(rk, "r", map[string]any{"V": int64(1)})}); err == nil {
			t.Errorf("partition key %q accepted", rk)
		}
	}
	ok := strings.Repeat("k", 256) + " -_.:~!@$%^&*()"
	mustSubmit(t, s, insert(pk, ok, map[string]any{"V": int64(1)}))
	mustGet(t, s, pk, ok)
}
