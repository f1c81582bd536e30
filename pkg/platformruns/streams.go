package platformruns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// A background run's stream (platform.RunStreams) is kept in the engine's payload store, as
// payloads of the run's durable run: "<run id>/<nonce>/stream/<n>" for chunk n, where nonce
// is the durable run's (durable.StepInfo). So every instance reads it, it survives restarts,
// on the in-memory store it counts against the run's share of the memory budget, and
// engine.Engine.PurgeRun (and the engine's retention) deletes it with the run. The executing
// run knows its nonce from its step; a reader finds it in the run's first turn check
// (wait_turn records it in the state), one history page of a few rows, read until found.

// historyRowsForNonce is how many of a run's first history rows a reader looks through for
// its first turn check: run_started, then wait_turn's node_completed.
const historyRowsForNonce = 4

var _ platform.RunStreams = (*Backend)(nil)

// errNoPayloads reports an engine without a payload store the backend can reach.
var errNoPayloads = errors.New("platformruns: the engine has no payload store for run streams")

// RunStream implements platform.RunStreams. Errors: an engine that is not bound or whose
// payload store the backend cannot reach (an Engine other than *engine.Engine).
func (b *Backend) RunStream(ctx context.Context, _, runID string) (platform.StreamChunks, error) {
	eng, err := b.engine()
	if err != nil {
		return nil, err
	}
	eo, ok := eng.(interface{ Options() engine.Options })
	if !ok || eo.Options().Payloads == nil {
		return nil, errNoPayloads
	}
	c := &streamChunks{eng: eng, payloads: eo.Options().Payloads, runID: runID}
	if info, ok := durable.StepInfoFrom(ctx); ok && info.RunID == runID && info.Nonce != "" {
		c.prefix = streamPrefix(runID, info.Nonce)
	}
	return c, nil
}

// streamPrefix is the key prefix of a run's stream chunks.
func streamPrefix(runID, nonce string) string { return runID + "/" + nonce + "/stream/" }

// streamChunks is one run's stream in the payload store.
type streamChunks struct {
	eng      Engine
	payloads engine.PayloadStore
	runID    string

	mu     sync.Mutex
	prefix string // "" until known; guarded by mu
}

// PutChunk implements platform.StreamChunks. Only the executing run writes: it knows its
// nonce.
func (c *streamChunks) PutChunk(ctx context.Context, n int, data []byte) error {
	c.mu.Lock()
	prefix := c.prefix
	c.mu.Unlock()
	if prefix == "" {
		return fmt.Errorf("put stream chunk %d of run %s: not in the run's own step", n, c.runID)
	}
	if err := c.payloads.Put(ctx, prefix+strconv.Itoa(n), data); err != nil {
		if errors.Is(err, engine.ErrStorageFull) {
			err = fmt.Errorf("%w: %w", platform.ErrStreamStoreFull, err)
		}
		return fmt.Errorf("put stream chunk %d of run %s: %w", n, c.runID, err)
	}
	return nil
}

// Chunk implements platform.StreamChunks: platform.ErrChunkNotFound also while the run has not
// checked its turn yet (no nonce known).
func (c *streamChunks) Chunk(ctx context.Context, n int) ([]byte, error) {
	prefix, err := c.find(ctx)
	if err != nil || prefix == "" {
		return nil, err
	}
	data, err := c.payloads.Get(ctx, prefix+strconv.Itoa(n))
	if errors.Is(err, engine.ErrNotFound) {
		return nil, platform.ErrChunkNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read stream chunk %d of run %s: %w", n, c.runID, err)
	}
	return data, nil
}

// find returns the stream's key prefix, reading the run's nonce from its first turn check
// while it is not known: "" with platform.ErrChunkNotFound when the run has not checked yet.
func (c *streamChunks) find(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prefix != "" {
		return c.prefix, nil
	}
	page, err := c.eng.History(ctx, c.runID, "", historyRowsForNonce)
	if errors.Is(err, engine.ErrRunNotFound) {
		return "", platform.ErrChunkNotFound
	}
	if err != nil {
		return "", fmt.Errorf("find the stream of run %s: %w", c.runID, err)
	}
	var folded json.RawMessage // the page is the history's first: its states fold from the start
	for _, ev := range page.Events {
		if folded, _, err = engine.FoldState(folded, ev); err != nil {
			return "", fmt.Errorf("find the stream of run %s: %w", c.runID, err)
		}
		if ev.Type != engine.HistoryNodeCompleted || ev.Node != nodeWaitTurn {
			continue
		}
		var s state
		if json.Unmarshal(folded, &s) == nil && s.Nonce != "" {
			c.prefix = streamPrefix(c.runID, s.Nonce)
			return c.prefix, nil
		}
	}
	return "", platform.ErrChunkNotFound
}
