package echoagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// historyLimit is the number of checkpoints kept per thread.
const historyLimit = checkpoint.DefaultKeep

// channel is the one channel of the graph.
const channel = "messages"

var (
	_ platform.StateHistorian = (*Graph)(nil)
	_ platform.ThreadDeleter  = (*Graph)(nil)
	_ platform.ModeStreamer   = (*Graph)(nil)
)

type stepMetadata struct {
	Source string `json:"source"`
	Step   int    `json:"step"`
}

// decode returns a checkpoint's state and step; the zero Tuple decodes as an empty thread.
func decode(tp checkpoint.Tuple) (State, int, error) {
	var st State
	if v, ok := tp.Values[channel]; ok {
		if err := json.Unmarshal(v.Data, &st.Messages); err != nil {
			return State{}, 0, fmt.Errorf("echo agent: decode checkpoint %s: %w", tp.Checkpoint.ID, err)
		}
	}
	if st.Messages == nil {
		st.Messages = []Message{}
	}
	var md stepMetadata
	if len(tp.Checkpoint.Metadata) > 0 {
		_ = json.Unmarshal(tp.Checkpoint.Metadata, &md)
	}
	return st, md.Step, nil
}

// commit writes the thread's new checkpoint after prev, then keeps only the newest
// historyLimit.
func (g *Graph) commit(ctx context.Context, tid string, prev checkpoint.Checkpoint, st State, step int) error {
	data, err := json.Marshal(st.Messages)
	if err != nil {
		return fmt.Errorf("echo agent: encode messages: %w", err)
	}
	md, _ := json.Marshal(stepMetadata{Source: "loop", Step: step})
	cp := checkpoint.Checkpoint{
		ID: checkpoint.NewID(), ParentID: prev.ID, TS: time.Now().UTC(), Metadata: md,
		ChannelVersions: map[string]string{channel: checkpoint.NextVersion(prev.ChannelVersions[channel])},
	}
	values := map[string]checkpoint.Value{channel: {SerdeType: checkpoint.SerdeJSON, Data: data}}
	if err := g.saver.Put(ctx, tid, "", cp, values); err != nil {
		return fmt.Errorf("echo agent: save thread: %w", err)
	}
	// Retention is best effort: a failed prune leaves one checkpoint too many, and the next
	// turn prunes again. The turn itself is committed.
	_, _ = g.saver.Prune(ctx, tid, "", historyLimit)
	return nil
}

// view renders a checkpoint as a state view.
func view(tp checkpoint.Tuple) (host.StateView, error) {
	st, step, err := decode(tp)
	if err != nil {
		return host.StateView{}, err
	}
	v := host.StateView{
		Values:    st,
		Next:      []string{},
		Metadata:  map[string]any{"source": "loop", "step": step},
		Config:    checkpointConfig(tp.ThreadID, tp.Checkpoint.ID),
		CreatedAt: tp.Checkpoint.TS,
	}
	if tp.Checkpoint.ParentID != "" {
		v.ParentConfig = checkpointConfig(tp.ThreadID, tp.Checkpoint.ParentID)
	}
	return v, nil
}

func checkpointConfig(tid, id string) map[string]any {
	return map[string]any{"configurable": map[string]any{"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": id}}
}

// GetStateHistory returns the thread's checkpoints newest first, starting at ref.ID when
// given. A thread (or checkpoint) the graph does not know has an empty history.
func (g *Graph) GetStateHistory(ctx context.Context, ref platform.CheckpointRef) ([]host.StateView, error) {
	var tuples []checkpoint.Tuple
	if ref.ID != "" {
		first, err := g.saver.Get(ctx, checkpoint.Ref{ThreadID: ref.ThreadID, ID: ref.ID})
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("echo agent: get history: %w", err)
		}
		tuples = append(tuples, first)
	}
	rest, err := g.saver.List(ctx, ref.ThreadID, "", checkpoint.ListOptions{Before: ref.ID})
	if err != nil {
		return nil, fmt.Errorf("echo agent: get history: %w", err)
	}
	var out []host.StateView
	for _, tp := range append(tuples, rest...) {
		v, err := view(tp)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// DeleteThread removes the thread's checkpoints.
func (g *Graph) DeleteThread(ctx context.Context, threadID string) error {
	if err := g.saver.DeleteThread(ctx, threadID); err != nil {
		return fmt.Errorf("echo agent: delete thread: %w", err)
	}
	return nil
}

// MaxDelay caps the `config.configurable.delay_ms` a turn honours.
const MaxDelay = 10 * time.Second

// pause simulates a slow model: it waits `config.configurable.delay_ms` milliseconds (at most
// MaxDelay) before answering, or until ctx ends. Demos and tests use it to hold a thread busy.
func pause(ctx context.Context, config json.RawMessage) error {
	var cfg struct {
		Configurable struct {
			DelayMS float64 `json:"delay_ms"`
		} `json:"configurable"`
	}
	if config != nil {
		_ = json.Unmarshal(config, &cfg)
	}
	d := min(time.Duration(cfg.Configurable.DelayMS*float64(time.Millisecond)), MaxDelay)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
