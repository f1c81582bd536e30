package platform

import (
	"context"
	"encoding/json"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// The optional graph capabilities the platform routes use, besides those of package host
// (InvocableGraph, StreamableGraph, StatefulGraph, Checkpointed). A Go graph implements the
// ones it supports; the routes answer 409 or 501 for the others.

// CheckpointRef names one checkpoint of a thread.
type CheckpointRef struct {
	// ThreadID is the thread; NS the checkpoint namespace ("" is the default); ID the
	// checkpoint id ("" means the latest).
	ThreadID, NS, ID string
}

// StateUpdate is a request to write a thread's state as if a node had produced values.
type StateUpdate struct {
	// Values is a JSON object, or an array of objects.
	Values json.RawMessage
	// AsNode is the node the update is attributed to; "" lets the graph choose.
	AsNode string
	// Checkpoint is the checkpoint to update from; its ID "" means the latest.
	Checkpoint CheckpointRef
}

// StateUpdater is the optional capability behind POST threads/{id}/state.
type StateUpdater interface {
	// UpdateState writes a new checkpoint and returns it. An error wrapping
	// host.ErrThreadNotFound is answered 404 with the error's text; any other error is a 500.
	UpdateState(ctx context.Context, threadID string, u StateUpdate) (CheckpointRef, error)
}

// StateHistorian is the optional capability behind POST threads/{id}/history.
type StateHistorian interface {
	// GetStateHistory returns the thread's state views, newest first, starting at ref (ID
	// "" means the latest). Views carry Config (and ParentConfig) with
	// configurable.checkpoint_id so history entries can be addressed. An error wrapping
	// host.ErrThreadNotFound is answered 200 []; any other error is a 500.
	GetStateHistory(ctx context.Context, ref CheckpointRef) ([]host.StateView, error)
}

// ThreadDeleter is the optional capability that lets DELETE threads/{id} remove a thread's
// checkpoints along with the thread record.
type ThreadDeleter interface {
	// DeleteThread removes every checkpoint of the thread; deleting an unknown thread is not
	// an error.
	DeleteThread(ctx context.Context, threadID string) error
}

// ModeStreamer is the optional capability of graphs that emit several stream modes in one
// run (runs/stream with a stream_mode list of two or more, as RemoteGraph always asks). A
// streaming graph without it gets every event of its Stream (run in the first requested mode)
// under each requested mode.
type ModeStreamer interface {
	// StreamModes runs the graph once and calls emit with one of modes and its event, in
	// order; emit's contract is StreamableGraph's. A mode the graph cannot emit is skipped.
	StreamModes(ctx context.Context, req host.Request, modes []string, emit func(mode string, chunk any) error) error
}

type runCtxKey struct{}

// RunContext returns the `context` object of the platform run that ctx belongs to, or nil.
// Graphs read it next to the request's config.
func RunContext(ctx context.Context) json.RawMessage {
	v, _ := ctx.Value(runCtxKey{}).(json.RawMessage)
	return v
}

func withRunContext(ctx context.Context, v json.RawMessage) context.Context {
	if v == nil {
		return ctx
	}
	return context.WithValue(ctx, runCtxKey{}, v)
}

func hasCheckpointer(g host.InvocableGraph) bool {
	c, ok := g.(host.Checkpointed)
	return ok && c.HasCheckpointer()
}
