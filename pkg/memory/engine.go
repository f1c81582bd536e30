package memory

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
)

// NewEngine returns a durable engine on fresh in-memory twins: the embedded default of the
// standalone server and the usual engine of tests. opts may set anything but the registry
// and the storage, which it fills in (a nil opts means all defaults). Call Start to run the
// embedded dispatcher, Close to stop it.
func NewEngine(reg *durable.Registry, opts *engine.EngineOptions) (*engine.Engine, error) {
	var o engine.EngineOptions
	if opts != nil {
		o = *opts
	}
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
