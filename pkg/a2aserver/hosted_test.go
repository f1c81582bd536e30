package a2aserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/a2aserver"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/protocoltest"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

type sumIn struct {
	Numbers []float64 `json:"numbers"`
}

// serveHosted is the A2A endpoint over no durable graph and a hosting app with echo_agent (a
// checkpointer), sum (fails on no numbers) and secret (admin level), through both
// transports, with isolation iso (nil: off).
func serveHosted(t *testing.T, iso *isolation.Isolation) []funchosttest.Transport {
	t.Helper()
	logger := funchosttest.TestLogger(t)
	h, err := host.New(host.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Register(echoagent.New(echoagent.Options{}), echoagent.Name, host.RegisterOptions{Description: "Echoes"}); err != nil {
		t.Fatal(err)
	}
	sum := host.Func[sumIn, map[string]float64](func(_ context.Context, in sumIn) (map[string]float64, error) {
		if len(in.Numbers) == 0 {
			return nil, errors.New("secret internal detail")
		}
		var s float64
		for _, n := range in.Numbers {
			s += n
		}
		return map[string]float64{"sum": s}, nil
	})
	if err := h.Register(sum, "sum", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Register(sum, "secret", host.RegisterOptions{AuthLevel: funchost.AuthAdmin}); err != nil {
		t.Fatal(err)
	}
	if iso != nil {
		h.SetIsolation(iso, &protocoltest.Owners{})
	}
	reg := durable.NewRegistry()
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := a2aserver.New(a2aserver.Options{Runs: eng, Registry: reg, Hosted: h, Isolation: iso, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app := funchost.NewFunctionApp()
	if err := srv.Register(app); err != nil {
		t.Fatal(err)
	}
	return funchosttest.Transports(t, app)
}

// reply sends a message to a hosted agent and returns the agent's answer.
func (c client) reply(params string) a2aserver.Message {
	c.t.Helper()
	a := c.call("SendMessage", params)
	var r a2aserver.SendMessageResponse
	if a.Error != nil || json.Unmarshal(a.Result, &r) != nil || r.Message == nil || r.Task != nil {
		c.t.Fatalf("SendMessage: %+v %s", a.Error, a.Result)
	}
	return *r.Message
}

func echoMessage(contextID, text string) string {
	return fmt.Sprintf(`{"message":{"messageId":"e-%d","contextId":%q,"role":"ROLE_USER","parts":[{"data":{"messages":[{"role":"user","content":%q}]}}]}}`,
		messageSeq.Add(1), contextID, text)
}

func echoed(t *testing.T, m a2aserver.Message) []echoagent.Message {
	t.Helper()
	var st echoagent.State
	if m.Role != a2aserver.RoleAgent || len(m.Parts) != 1 || json.Unmarshal(m.Parts[0].Data, &st) != nil {
		t.Fatalf("agent message: %+v", m)
	}
	return st.Messages
}

func TestHosted_AMessageRunsTheGraphAndItsContextIsTheThread(t *testing.T) {
	for _, tr := range serveHosted(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, tr, "")
			c.path = "/api/a2a/" + echoagent.Name
			first := c.reply(echoMessage("", "hello"))
			if first.ContextID == "" || len(echoed(t, first)) != 2 {
				t.Fatalf("first answer: %+v", first)
			}
			second := c.reply(echoMessage(first.ContextID, "again"))
			if second.ContextID != first.ContextID || len(echoed(t, second)) != 4 {
				t.Fatalf("second answer on %s: %+v", first.ContextID, second)
			}
			if other := c.reply(echoMessage("", "hello")); other.ContextID == first.ContextID || len(echoed(t, other)) != 2 {
				t.Fatalf("a message without a context continued another: %+v", other)
			}

			// Streamed: one event, the agent's message.
			_, body, h := c.post(`{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":` + echoMessage(first.ContextID, "streamed") + `}`)
			if !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") || strings.Count(body, "data: ") != 1 ||
				!strings.Contains(body, `"message":{`) || !strings.Contains(body, `"streamed"`) {
				t.Fatalf("stream: %s %s", h.Get("Content-Type"), body)
			}

			// No tasks: none to read, continue, subscribe to or list.
			c.wantError("GetTask", `{"id":"a2a-0"}`, a2aserver.CodeTaskNotFound)
			c.wantError("CancelTask", `{"id":"a2a-0"}`, a2aserver.CodeTaskNotFound)
			c.wantError("SubscribeToTask", `{"id":"a2a-0"}`, a2aserver.CodeTaskNotFound)
			c.wantError("SendMessage", answerMessage("a2a-0", `{}`), a2aserver.CodeTaskNotFound)
			if r := c.call("ListTasks", `{}`); r.Error != nil || !strings.Contains(string(r.Result), `"tasks":[]`) {
				t.Fatalf("ListTasks: %+v %s", r.Error, r.Result)
			}
		})
	}
}

func TestHosted_ErrorsAndLevels(t *testing.T) {
	for _, tr := range serveHosted(t, nil) {
		t.Run(tr.Name, func(t *testing.T) {
			c := newClient(t, tr, "")
			c.path = "/api/a2a/sum"
			m := c.reply(fmt.Sprintf(`{"message":{"messageId":"s-%d","role":"ROLE_USER","parts":[{"data":{"numbers":[1,2.5]}}]}}`, messageSeq.Add(1)))
			if string(m.Parts[0].Data) != `{"sum":3.5}` {
				t.Fatalf("sum: %s", m.Parts[0].Data)
			}
			msg := c.wantError("SendMessage", fmt.Sprintf(`{"message":{"messageId":"s-%d","role":"ROLE_USER","parts":[{"data":{"numbers":[]}}]}}`, messageSeq.Add(1)), a2aserver.CodeInternalError)
			if msg != "Graph execution failed" {
				t.Fatalf("failing graph: %q", msg)
			}
			c.wantError("SendMessage", fmt.Sprintf(`{"message":{"messageId":"s-%d","role":"ROLE_USER","parts":[{"data":{"numbers":"three"}}]}}`, messageSeq.Add(1)), a2aserver.CodeInvalidParams)

			// A graph whose routes need the admin level is no agent at the function level.
			c.path = "/api/a2a/secret"
			if status, body, _ := c.post(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`); status != http.StatusNotFound {
				t.Fatalf("secret: %d %s", status, body)
			}
			for name, want := range map[string]int{echoagent.Name: 200, "secret": 404} {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tr.BaseURL+"/api/a2a/"+name+"/.well-known/agent-card.json", nil)
				req.Header.Set("x-functions-key", tr.FunctionKey)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var card a2aserver.AgentCard
				_ = json.NewDecoder(res.Body).Decode(&card)
				res.Body.Close()
				if res.StatusCode != want || (want == 200 && (card.Name != name || !strings.HasPrefix(card.Description, "Echoes.") || !card.Capabilities.Streaming)) {
					t.Fatalf("card of %s: %d %+v", name, res.StatusCode, card)
				}
			}
		})
	}
}

func TestHosted_AContextIsItsCallersThread(t *testing.T) {
	for _, tr := range serveHosted(t, newIsolation(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			a, b := newClient(t, tr, "alice"), newClient(t, tr, "bob")
			a.path, b.path = "/api/a2a/"+echoagent.Name, "/api/a2a/"+echoagent.Name
			mine := a.reply(echoMessage("", "from alice"))
			if again := a.reply(echoMessage(mine.ContextID, "alice again")); len(echoed(t, again)) != 4 {
				t.Fatalf("alice's second turn: %+v", again)
			}
			msg := b.wantError("SendMessage", echoMessage(mine.ContextID, "bob"), a2aserver.CodeInvalidParams)
			if !strings.Contains(msg, "not found") || strings.Contains(msg, "alice") {
				t.Fatalf("bob on alice's context: %q", msg)
			}
		})
	}
}
