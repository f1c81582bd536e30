package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// ValidateBatch bounds a string's UTF-16 size by its UTF-8 bytes first; what it accepts and
// the sizes its errors report are those of the exact UTF-16 measure.
func TestValidateBatch_NonASCII_ExactSizes(t *testing.T) {
	t.Parallel()
	op := func(v string) []engine.Op {
		return []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"S": v}}}}
	}
	if err := engine.ValidateBatch(op(strings.Repeat("é", 32768))); err != nil { // 64 KiB in UTF-16, 128 KiB in bytes
		t.Errorf("32768 é: %v", err)
	}
	err := engine.ValidateBatch(op(strings.Repeat("é", 32769)))
	var be *engine.BatchError
	var le *engine.LimitError
	if !errors.As(err, &be) || !errors.As(err, &le) || le.Size != 2*32769 || le.Property != "S" {
		t.Errorf("32769 é: %v (limit error %+v)", err, le)
	}
	// An entity under 1 MiB measured in UTF-16 (15 × 64 000 B), above it counted in UTF-8 bytes.
	props := map[string]any{}
	for i := range 15 {
		props["S"+strings.Repeat("x", i+1)] = strings.Repeat("😀", 16000)
	}
	if err := engine.ValidateBatch([]engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "p", RowKey: "r", Properties: props}}}); err != nil {
		t.Errorf("15 properties of 16000 surrogate pairs: %v", err)
	}
}
