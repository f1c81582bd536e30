package memory

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// NewEngine returns a durable engine on fresh in-memory twins: the embedded default of the
// standalone server and the usual engine of tests. opts is the engine's config by value, as
// everywhere in funcgraph (the zero EngineOptions means every default); NewEngine sets its
// Registry to reg and fills in the Store, Queue and Payloads left nil with in-memory twins on
// opts.Clock. Call Start to run the embedded dispatcher, Close to stop it.
func NewEngine(reg *durable.Registry, opts engine.EngineOptions) (*engine.Engine, error) {
	o := opts
	o.Registry = reg
	var mopts []Option
	if o.Clock != nil {
		mopts = append(mopts, WithClock(o.Clock))
	}
	if o.Store == nil {
		o.Store = NewStore(mopts...)
	}
	if o.Queue == nil {
		o.Queue = NewQueue(mopts...)
	}
	if o.Payloads == nil {
		o.Payloads = NewPayloadStore()
	}
	e, err := engine.NewEngine(o)
	if err != nil {
		return nil, fmt.Errorf("new in-memory engine: %w", err)
	}
	return e, nil
}
