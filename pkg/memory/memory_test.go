package memory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

func TestStore_Conformance(t *testing.T) {
	t.Parallel()
	shared := memory.NewStore()
	enginetest.RunStoreTests(t, func(*testing.T) engine.Store { return shared })
}

func TestStore_SearchKeyConformance(t *testing.T) {
	t.Parallel()
	enginetest.RunSearchKeyTests(t, func(*testing.T) engine.Store { return memory.NewStore() })
}

func TestQueue_Conformance(t *testing.T) {
	t.Parallel()
	enginetest.RunWorkQueueTests(t, func(*testing.T) engine.WorkQueue { return memory.NewQueue() })
}

func TestPayloadStore_Conformance(t *testing.T) {
	t.Parallel()
	shared := memory.NewPayloadStore()
	enginetest.RunPayloadStoreTests(t, func(*testing.T) engine.PayloadStore { return shared })
}

func TestStore_KeyOverOneKiBInUTF16_Rejected(t *testing.T) {
	t.Parallel()
	s := memory.NewStore()
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"512 ASCII", strings.Repeat("k", 512), true},
		{"513 ASCII", strings.Repeat("k", 513), false},
		{"256 surrogate pairs", strings.Repeat("😀", 256), true},
		{"257 surrogate pairs", strings.Repeat("😀", 257), false},
	}
	for _, tt := range tests {
		_, err := s.Submit(t.Context(), []engine.Op{{Kind: engine.OpInsert,
			Entity: engine.Entity{PartitionKey: "p", RowKey: tt.key, Properties: map[string]any{"V": int64(1)}}}})
		if tt.ok != (err == nil) {
			t.Errorf("%s: err = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if !tt.ok && !errors.Is(err, engine.ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", tt.name, err)
		}
	}
}
