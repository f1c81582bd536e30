package threads_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platform/threads/threadstest"
)

func TestMemory_Conformance(t *testing.T) {
	threadstest.RunStoreTests(t, func(*testing.T) threads.Store { return threads.NewMemory() })
}
