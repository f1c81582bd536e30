package echoagent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// historyLimit is the number of checkpoints kept per thread.
const historyLimit = 20

// snapshot is one checkpoint of a thread: the messages after a turn.
type snapshot struct {
	id       string
	step     int
	messages []Message
	at       time.Time
}

var (
	_ platform.StateHistorian = (*Graph)(nil)
	_ platform.ThreadDeleter  = (*Graph)(nil)
	_ platform.Ephemeral      = (*Graph)(nil)
)

// record appends the thread's current messages as a checkpoint. Called with t.mu held.
func (t *thread) record() {
	t.history = append(t.history, snapshot{
		id: uuid.Must(uuid.NewV7()).String(), step: t.step,
		messages: append([]Message(nil), t.messages...), at: time.Now().UTC(),
	})
	if over := len(t.history) - historyLimit; over > 0 {
		t.history = append([]snapshot(nil), t.history[over:]...)
	}
}

// view renders checkpoint i of the thread. Called with t.mu held.
func (t *thread) view(tid string, i int) host.StateView {
	s := t.history[i]
	v := host.StateView{
		Values:    State{Messages: append([]Message(nil), s.messages...)},
		Next:      []string{},
		Metadata:  map[string]any{"source": "loop", "step": s.step},
		Config:    checkpointConfig(tid, s.id),
		CreatedAt: s.at,
	}
	if i > 0 {
		v.ParentConfig = checkpointConfig(tid, t.history[i-1].id)
	}
	return v
}

func checkpointConfig(tid, id string) map[string]any {
	return map[string]any{"configurable": map[string]any{"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": id}}
}

// GetStateHistory returns the thread's checkpoints newest first, starting at ref.ID when
// given. A thread the graph never saw has an empty history.
func (g *Graph) GetStateHistory(_ context.Context, ref platform.CheckpointRef) ([]host.StateView, error) {
	g.mu.Lock()
	t, ok := g.threads[ref.ThreadID]
	g.mu.Unlock()
	if !ok {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []host.StateView
	started := ref.ID == ""
	for i := len(t.history) - 1; i >= 0; i-- {
		if !started && t.history[i].id == ref.ID {
			started = true
		}
		if started {
			out = append(out, t.view(ref.ThreadID, i))
		}
	}
	return out, nil
}

// DeleteThread forgets a thread.
func (g *Graph) DeleteThread(_ context.Context, threadID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.threads[threadID]; ok {
		delete(g.threads, threadID)
		for i, id := range g.order {
			if id == threadID {
				g.order = append(g.order[:i], g.order[i+1:]...)
				break
			}
		}
	}
	return nil
}

// WithoutCheckpointer returns an echo agent that keeps nothing, for threadless runs: each
// turn answers from its input alone.
func (g *Graph) WithoutCheckpointer() host.InvocableGraph { return ephemeral{} }

// ephemeral is the echo agent without a checkpointer.
type ephemeral struct{}

// Invoke answers one turn from the input alone.
func (ephemeral) Invoke(ctx context.Context, req host.Request) (any, error) {
	st, _, err := New(Options{MaxThreads: 1}).turn(ctx, req)
	return st, err
}

// Stream emits one event per message of the turn.
func (ephemeral) Stream(ctx context.Context, req host.Request, emit func(chunk any) error) error {
	return New(Options{MaxThreads: 1}).Stream(ctx, req, emit)
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
