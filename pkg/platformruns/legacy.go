package platformruns

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// legacyHash is the graph hash of version "1" of GraphName (wait_turn → execute), the release
// before the turn hand-off; a test holds legacyGraph to it.
const legacyHash = "7453bc7a9cc7d313"

// legacyGraph is version "1" of GraphName, which Register registers as durable.Previous so that background
// runs a previous release started (and an upgrade left pending) finish here instead of parking
// for a version no process runs. Its wait_turn goes straight on: those runs have no group rows,
// so the queue cannot order them; execute still runs them one at a time per thread (the
// thread's lock, platform.ErrRetryLater). Such runs are found by Get, Join and Cancel, not by
// List or Active, which read the group index.
func (b *Backend) legacyGraph() (durable.Graph, error) {
	mb := durable.NewManifestBuilder[state](GraphName, durable.WithVersion("1"))
	mb.SetEntrypoint(nodeWaitTurn)
	proceed := func(context.Context, state) (any, error) { return nil, nil }
	if err := mb.AddNode(nodeWaitTurn, proceed, durable.WithNext(nodeExecute), durable.WithHandlerName("platformruns.wait_turn")); err != nil {
		return nil, fmt.Errorf("register platform runs v1: %w", err)
	}
	if err := mb.AddNode(nodeExecute, b.execute, durable.Terminal(), durable.WithHandlerName("platformruns.execute")); err != nil {
		return nil, fmt.Errorf("register platform runs v1: %w", err)
	}
	g, err := mb.Build()
	if err != nil {
		return nil, fmt.Errorf("register platform runs v1: %w", err)
	}
	return g, nil
}
