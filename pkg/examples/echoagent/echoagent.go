package echoagent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// Name is the graph name the example app registers the graph under.
const Name = "echo_agent"

// Defaults of Options.
const (
	DefaultMaxMessages = 100
	DefaultMaxThreads  = 1000
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
	// MaxThreads is the number of threads kept; the oldest thread is forgotten first. 0
	// means 1000.
	MaxThreads int
	// MaxThreadBytes is the byte budget of one thread, counted as the bytes of its messages'
	// roles and contents: the oldest messages are dropped to stay within it, and a turn whose
	// own messages exceed it is refused (422). 0 means 1 MiB.
	MaxThreadBytes int
	// MaxTotalBytes is the byte budget of all threads together: the oldest threads are
	// forgotten to stay within it. 0 means 64 MiB.
	MaxTotalBytes int
}

// Graph is the echo agent. It is safe for concurrent use; the host's thread lock serialises
// turns of one thread.
type Graph struct {
	maxMessages, maxThreads       int
	maxThreadBytes, maxTotalBytes int

	mu      sync.Mutex
	threads map[string]*thread // guarded by mu
	order   []string           // thread ids, oldest first; guarded by mu
	sizes   map[string]int     // bytes per thread; guarded by mu
	total   int                // sum of sizes; guarded by mu
}

// thread is one conversation. Its own mutex keeps threads from contending with each other.
type thread struct {
	mu       sync.Mutex
	messages []Message  // guarded by mu
	step     int        // guarded by mu
	history  []snapshot // newest last, at most historyLimit; guarded by mu
}

var (
	_ host.GraphLike     = (*Graph)(nil)
	_ host.StatefulGraph = (*Graph)(nil)
	_ host.Checkpointed  = (*Graph)(nil)
)

// New returns an echo agent with an empty in-memory checkpointer.
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
	return &Graph{maxMessages: opts.MaxMessages, maxThreads: opts.MaxThreads,
		maxThreadBytes: opts.MaxThreadBytes, maxTotalBytes: opts.MaxTotalBytes,
		threads: map[string]*thread{}, sizes: map[string]int{}}
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

// GetState returns the thread's messages. A thread the graph never saw has empty state.
func (g *Graph) GetState(_ context.Context, threadID string) (host.StateView, error) {
	g.mu.Lock()
	t, ok := g.threads[threadID]
	g.mu.Unlock()
	if !ok {
		return host.StateView{}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.history); n > 0 {
		return t.view(threadID, n-1), nil
	}
	msgs := append([]Message(nil), t.messages...)
	return host.StateView{
		Values:   State{Messages: msgs},
		Metadata: map[string]any{"source": "loop", "step": t.step},
	}, nil
}

// turn applies the echo rule and saves the thread.
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
	t := g.thread(tid)
	t.mu.Lock()
	t.messages = append(t.messages, added...)
	if over := len(t.messages) - g.maxMessages; over > 0 {
		t.messages = append([]Message(nil), t.messages[over:]...)
	}
	size := messageBytes(t.messages)
	drop := 0
	for size > g.maxThreadBytes {
		size -= len(t.messages[drop].Role) + len(t.messages[drop].Content)
		drop++
	}
	if drop > 0 {
		t.messages = append([]Message(nil), t.messages[drop:]...)
	}
	t.step++
	t.record()
	out := State{Messages: append([]Message(nil), t.messages...)}
	t.mu.Unlock()
	g.account(tid, t, size)
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

// account records a thread's size and forgets the oldest other threads while the total is over
// MaxTotalBytes.
func (g *Graph) account(tid string, t *thread, size int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.threads[tid] != t {
		return // forgotten meanwhile
	}
	g.total += size - g.sizes[tid]
	g.sizes[tid] = size
	for i := 0; g.total > g.maxTotalBytes && i < len(g.order); {
		old := g.order[i]
		if old == tid {
			i++
			continue
		}
		g.forget(i)
	}
}

// forget drops the thread at position i of order; g.mu must be held.
func (g *Graph) forget(i int) {
	tid := g.order[i]
	g.total -= g.sizes[tid]
	delete(g.sizes, tid)
	delete(g.threads, tid)
	g.order = append(g.order[:i], g.order[i+1:]...)
}

// thread returns the thread with id tid, creating it (and forgetting the oldest thread beyond
// MaxThreads) when needed.
func (g *Graph) thread(tid string) *thread {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.threads[tid]
	if t == nil {
		t = &thread{}
		g.threads[tid] = t
		g.order = append(g.order, tid)
		for len(g.order) > g.maxThreads {
			g.forget(0)
		}
	}
	return t
}
