package platformruns

import (
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// SetRecheck sets the safety nets of b's waits for their turn: near for the run next in
// line, far for those behind it.
func SetRecheck(b *Backend, near, far time.Duration) { b.recheck, b.recheckFar = near, far }

// LegacyGraph returns version "1" of GraphName and the hash it must keep.
func LegacyGraph(b *Backend) (durable.Graph, string, error) {
	g, err := b.legacyGraph()
	return g, legacyHash, err
}
