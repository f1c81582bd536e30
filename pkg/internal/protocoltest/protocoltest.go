// Package protocoltest holds the fixtures the tests of the protocol endpoints (mcpserver,
// a2aserver) share: a record of thread owners for the hosting routes under isolation, and a
// running engine with a graph whose step writes live chunks and waits for the test.
package protocoltest

import (
	"context"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Owners is a host.ThreadOwners over a map: the part of the platform's thread store the
// hosting routes need under isolation. Its zero value is ready; it is safe for concurrent use.
type Owners struct {
	mu sync.Mutex
	m  map[string]string
}

// ThreadOwner implements host.ThreadOwners.
func (o *Owners) ThreadOwner(_ context.Context, tid string) (any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if who, ok := o.m[tid]; ok {
		return who, nil
	}
	return nil, host.ErrThreadNotFound
}

// CreateThread implements host.ThreadOwners.
func (o *Owners) CreateThread(_ context.Context, tid, owner string) (any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if who, ok := o.m[tid]; ok {
		return who, nil
	}
	if o.m == nil {
		o.m = map[string]string{}
	}
	o.m[tid] = owner
	return owner, nil
}

// TalkerGraph is the name of Talker's graph; its output state is {"said": "Hello"}.
const TalkerGraph = "talker"

// Talker returns a started in-memory engine, with a live channel, whose registry holds the
// graph "talker": its one node writes each of pieces as a message chunk
// (durable.WriteMessageChunk), then waits until release is closed (or its context ends) and
// completes. A test reads the chunks while the step runs and closes release once it has.
func Talker(t testing.TB, release <-chan struct{}, opts engine.Options, pieces ...string) (*engine.Engine, *durable.Registry) {
	t.Helper()
	type state struct {
		Said string `json:"said"`
	}
	b := durable.NewManifestBuilder[state](TalkerGraph)
	b.SetEntrypoint("talk")
	if err := b.AddNode("talk", func(ctx context.Context, _ state) (any, error) {
		for _, p := range pieces {
			if err := durable.WriteMessageChunk(ctx, p); err != nil {
				return nil, err
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return durable.Update{"said": "Hello"}, nil
	}, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	opts.Registry, opts.Store, opts.Queue = reg, memory.NewStore(), memory.NewQueue()
	opts.Payloads, opts.Live = memory.NewPayloadStore(), memory.NewLiveStore()
	eng, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return eng, reg
}
