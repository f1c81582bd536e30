package platform

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// chatter is a ModeStreamer: its input {"say": [...]} is a turn of messages; per message, in
// the requested modes, "values" is {"said": <the messages so far>}, "updates" {"chat": {"said":
// <the message>}} and "messages-tuple" [{"role": "assistant", "content": <the message>},
// {"langgraph_node": "chat"}]. A message "hold:<name>" first waits until the gate <name> is
// closed; "fail" fails the run. Its Stream fails: one mode of it must not be used.
type chatter struct{ gates sync.Map }

func (c *chatter) gate(name string) chan struct{} {
	g, _ := c.gates.LoadOrStore(name, make(chan struct{}))
	return g.(chan struct{})
}

func (c *chatter) Invoke(ctx context.Context, req host.Request) (any, error) {
	var last any
	err := c.StreamModes(ctx, req, []string{"values"}, func(_ string, v any) error { last = v; return nil })
	return last, err
}

func (c *chatter) Stream(context.Context, host.Request, func(any) error) error {
	return errors.New("chatter streams through StreamModes only")
}

func (c *chatter) StreamModes(ctx context.Context, req host.Request, modes []string, emit func(string, any) error) error {
	var in struct {
		Say []string `json:"say"`
	}
	_ = json.Unmarshal(req.Input, &in)
	for i, m := range in.Say {
		if name, ok := strings.CutPrefix(m, "hold:"); ok {
			select {
			case <-c.gate(name):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if m == "fail" {
			return errors.New("chatter failed")
		}
		for _, mode := range modes {
			var chunk any
			switch mode {
			case "values":
				chunk = map[string]any{"said": in.Say[:i+1]}
			case "updates":
				chunk = map[string]any{"chat": map[string]any{"said": m}}
			case "messages-tuple":
				chunk = []any{message{"assistant", m}, map[string]any{"langgraph_node": "chat"}}
			default:
				continue
			}
			if err := emit(mode, chunk); err != nil {
				return err
			}
		}
	}
	return nil
}

// message is a chat message, its keys in the order LangGraph writes them.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// joinFixture is newFixture with the graph "talk" (a chatter).
func joinFixture(t *testing.T, opts host.Options) (*fixture, *chatter) {
	t.Helper()
	f := newFixture(t, opts, nil)
	c := &chatter{}
	if err := f.svc.app.Register(c, "talk", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	return f, c
}

const endFrame = "event: end\ndata: null\n\n"

// A single messages mode streams `messages` frames of [message, metadata] pairs, as they are:
// from a ModeStreamer's StreamModes, and from another graph's Stream, asked for
// "messages-tuple" either way.
func TestRuns_MessagesOneMode_BothTransports(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	f, _ := joinFixture(t, host.Options{})
	f.chat.stream = func(_ context.Context, req host.Request, emit func(any) error) error {
		mu.Lock()
		asked = append(asked, req.StreamMode)
		mu.Unlock()
		return emit([]any{map[string]any{"content": "x"}, map[string]any{"langgraph_node": "n"}})
	}
	pair := func(m string) string {
		return "event: messages\ndata: [{\"role\": \"assistant\", \"content\": \"" + m + "\"}, {\"langgraph_node\": \"chat\"}]\n\n"
	}
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			for _, mode := range []string{`"messages-tuple"`, `"messages"`, `["messages"]`} {
				r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/stream", `{"assistant_id":"talk","input":{"say":["a","b"]},"stream_mode":`+mode+`}`)
				if want := pair("a") + pair("b") + endFrame; r.status != 200 || !strings.HasSuffix(r.body, want) || strings.Count(r.body, "event: ") != 4 {
					t.Errorf("talk in %s: %d %q; want the suffix %q", mode, r.status, r.body, want)
				}
				r = do(t, tr, "POST", "/api/threads/"+newThread(t, tr, "")+"/runs/stream", `{"assistant_id":"chat","stream_mode":`+mode+`}`)
				if want := "event: messages\ndata: [{\"content\": \"x\"}, {\"langgraph_node\": \"n\"}]\n\n" + endFrame; r.status != 200 || !strings.HasSuffix(r.body, want) {
					t.Errorf("chat in %s: %d %q; want the suffix %q", mode, r.status, r.body, want)
				}
			}
			// Several modes with "messages": the ModeStreamer is asked for "messages-tuple".
			r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/stream", `{"assistant_id":"talk","input":{"say":["a"]},"stream_mode":["updates","messages"]}`)
			if want := "event: updates\ndata: {\"chat\": {\"said\": \"a\"}}\n\n" + pair("a") + endFrame; r.status != 200 || !strings.HasSuffix(r.body, want) {
				t.Errorf("talk in updates and messages: %d %q; want the suffix %q", r.status, r.body, want)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range asked {
		if m != "messages-tuple" {
			t.Errorf("the graph's Stream was asked for %q, want messages-tuple", m)
		}
	}
}
