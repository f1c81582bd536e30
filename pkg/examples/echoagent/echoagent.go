package echoagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/host"
)

// Name is the graph name the example app registers the graph under.
const Name = "echo_agent"

// Defaults of Options.
const (
	// DefaultMaxMessages is the messages a thread keeps: its newest 100.
	DefaultMaxMessages = 100
	// DefaultMaxThreads is the threads the default checkpointer keeps.
	DefaultMaxThreads = 1000
	// DefaultMaxThreadBytes is the memory budget of one thread: 1 MiB of message text.
	DefaultMaxThreadBytes = 1 << 20
	// DefaultMaxTotalBytes is the memory budget of all threads together: 64 MiB of text.
	DefaultMaxTotalBytes = 64 << 20
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// State is the graph's state and output: the thread's messages.
type State struct {
	Messages []Message `json:"messages"`
}

// Options configures a Graph. The zero value means the defaults.
type Options struct {
	// MaxMessages is the number of messages kept per thread; 0 means 100.
	MaxMessages int
	// MaxThreadBytes is the byte budget of one thread, counted as the bytes of its messages'
	// roles and contents: the oldest messages are dropped to stay within it, and a turn whose
	// own messages exceed it is refused (422). 0 means 1 MiB.
	MaxThreadBytes int
	// MaxThreads and MaxTotalBytes bound the default in-memory checkpointer: the least
	// recently written threads are forgotten beyond MaxThreads threads (0 means 1000) or
	// beyond MaxTotalBytes bytes of stored checkpoints, values and metadata, all threads
	// together (0 means 64 MiB). They do not apply to a Checkpointer given here.
	MaxThreads    int
	MaxTotalBytes int
	// Checkpointer keeps the threads' checkpoints; nil means a checkpoint.Memory bounded by
	// MaxThreads and MaxTotalBytes. Give a blobcheckpoint.Saver to keep threads across
	// restarts and instances.
	Checkpointer checkpoint.Saver
}

// Graph is the echo agent. It is safe for concurrent use; the host's thread lock (or the
// platform's run lock) serialises turns of one thread.
type Graph struct {
	maxMessages, maxThreadBytes int
	saver                       checkpoint.Saver
}

var (
	_ host.GraphLike     = (*Graph)(nil)
	_ host.StatefulGraph = (*Graph)(nil)
	_ host.Checkpointed  = (*Graph)(nil)
)

// New returns an echo agent on opts.Checkpointer, or on a new in-memory checkpointer.
func New(opts Options) *Graph {
	if opts.MaxMessages <= 0 {
		opts.MaxMessages = DefaultMaxMessages
	}
	if opts.MaxThreads <= 0 {
		opts.MaxThreads = DefaultMaxThreads
	}
	if opts.MaxThreadBytes <= 0 {
		opts.MaxThreadBytes = DefaultMaxThreadBytes
	}
	if opts.MaxTotalBytes <= 0 {
		opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	saver := opts.Checkpointer
	if saver == nil {
		saver = checkpoint.NewMemory(checkpoint.MemoryOptions{MaxThreads: opts.MaxThreads, MaxBytes: opts.MaxTotalBytes})
	}
	return &Graph{maxMessages: opts.MaxMessages, maxThreadBytes: opts.MaxThreadBytes, saver: saver}
}

// HasCheckpointer reports true: turns need a thread id and run under the thread lock.
func (g *Graph) HasCheckpointer() bool { return true }

// Invoke runs one turn and returns the thread's history.
func (g *Graph) Invoke(ctx context.Context, req host.Request) (any, error) {
	st, _, err := g.turn(ctx, req)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Stream runs one turn and emits one event per message added in the turn.
func (g *Graph) Stream(ctx context.Context, req host.Request, emit func(chunk any) error) error {
	switch req.StreamMode {
	case "values", "updates":
	default:
		return fmt.Errorf("echo agent: unsupported stream mode %q", req.StreamMode)
	}
	_, added, err := g.turn(ctx, req)
	if err != nil {
		return err
	}
	for _, m := range added {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(State{Messages: []Message{m}}); err != nil {
			return err
		}
	}
	return nil
}

// Node is the graph's one node: the name its updates are keyed by.
const Node = "echo"

// StreamModes runs one turn and emits, in each requested mode it knows: "updates" the turn's
// messages keyed by the node ({"echo": {"messages": [...]}}), "values" the thread's state
// after the turn, "messages-tuple" one [message, metadata] pair per message of the turn.
func (g *Graph) StreamModes(ctx context.Context, req host.Request, modes []string, emit func(mode string, chunk any) error) error {
	st, added, err := g.turn(ctx, req)
	if err != nil {
		return err
	}
	for _, mode := range modes {
		var err error
		switch mode {
		case "updates":
			err = emit(mode, map[string]State{Node: {Messages: added}})
		case "values":
			err = emit(mode, st)
		case "messages-tuple":
			for _, m := range added {
				if err = emit(mode, []any{m, map[string]any{"langgraph_node": Node}}); err != nil {
					break
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// GetState returns the thread's latest checkpoint. A thread the graph never saw has empty
// state.
func (g *Graph) GetState(ctx context.Context, threadID string) (host.StateView, error) {
	tp, err := g.saver.Get(ctx, checkpoint.Ref{ThreadID: threadID})
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return host.StateView{}, nil
	case err != nil:
		return host.StateView{}, fmt.Errorf("echo agent: get state: %w", err)
	}
	return view(tp)
}

// turn applies the echo rule and commits a checkpoint.
func (g *Graph) turn(ctx context.Context, req host.Request) (State, []Message, error) {
	var in State
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return State{}, nil, &host.InputError{Field: "input.messages",
			Message: "Input should be a valid list of messages with string role and content"}
	}
	if err := pause(ctx, req.Config.Raw); err != nil {
		return State{}, nil, err
	}
	reply := Message{Role: "assistant"}
	if n := len(in.Messages); n > 0 {
		reply.Content = in.Messages[n-1].Content
	}
	added := append(in.Messages, reply)
	if n := messageBytes(added); n > g.maxThreadBytes {
		return State{}, nil, &host.InputError{Field: "input.messages",
			Message: fmt.Sprintf("Input exceeds the thread memory budget: %d bytes with the reply (max %d bytes)", n, g.maxThreadBytes)}
	}
	tid := req.Config.ThreadID
	prev, err := g.saver.Get(ctx, checkpoint.Ref{ThreadID: tid})
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return State{}, nil, fmt.Errorf("echo agent: read thread: %w", err)
	}
	st, step, err := decode(prev)
	if err != nil {
		return State{}, nil, err
	}
	msgs := append(st.Messages, added...)
	if over := len(msgs) - g.maxMessages; over > 0 {
		msgs = msgs[over:]
	}
	for size := messageBytes(msgs); size > g.maxThreadBytes; {
		size -= len(msgs[0].Role) + len(msgs[0].Content)
		msgs = msgs[1:]
	}
	out := State{Messages: append([]Message{}, msgs...)}
	if err := g.commit(ctx, tid, prev.Checkpoint, out, step+1); err != nil {
		return State{}, nil, err
	}
	return out, added, nil
}

// messageBytes is what a thread's budget counts: the bytes of roles and contents.
func messageBytes(ms []Message) int {
	n := 0
	for _, m := range ms {
		n += len(m.Role) + len(m.Content)
	}
	return n
}
