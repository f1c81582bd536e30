package message_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/message"
)

// Add merges an update into a conversation as LangGraph's add_messages does: a message with
// a known ID replaces it in place, a Remove marker deletes, the rest is appended.
func ExampleAdd() {
	list := []message.Message{
		{Type: message.TypeHuman, Content: message.Text("What is 2+2?"), ID: "q"},
		{Type: message.TypeAI, Content: message.Text("5"), ID: "a"},
	}
	list, err := message.Add(list,
		message.Message{Type: message.TypeAI, Content: message.Text("4"), ID: "a"}, // replaces "5"
		message.Human("Thanks!"), // appended, with an ID derived from it and its place
	)
	if err != nil {
		panic(err)
	}
	for _, m := range list {
		fmt.Println(m.Type, m.Text())
	}
	list, _ = message.Add(list, message.Remove("q"))
	fmt.Println(len(list), list[0].Text())
	_, err = message.Add(list, message.Remove("nope"))
	fmt.Println(err)
	// Output:
	// human What is 2+2?
	// ai 4
	// human Thanks!
	// 2 4
	// remove "nope": message: attempting to delete a message with an ID that doesn't exist
}

// A message decodes from the OpenAI-style dict a LangGraph client may send, its tool call's
// arguments a JSON string, and encodes as LangChain keeps it in a graph's state.
func ExampleMessage_UnmarshalJSON() {
	in := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",` +
		`"function":{"name":"weather","arguments":"{\"city\": \"Oslo\"}"}}]}`
	var m message.Message
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		panic(err)
	}
	fmt.Println(m.Type, m.ToolCalls[0].Name, string(m.ToolCalls[0].Args))
	out, _ := json.Marshal(m)
	fmt.Println(string(out))
	// Output:
	// ai weather {"city":"Oslo"}
	// {"content":"","additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":null,"tool_calls":[{"name":"weather","args":{"city":"Oslo"},"id":"call_1","type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":null}
}

// Chat is the state of a graph whose branches each add a reply to one conversation.
type Chat struct {
	Experts  []string          `json:"experts" durable:"required"`
	Messages []message.Message `json:"messages"`
}

// AddMessages is the reducer of a messages field: at the join of a fan-out each branch's new
// messages are merged, in branch order, with Add's rules.
func ExampleAddMessages() {
	b := durable.NewManifestBuilder[Chat]("panel")
	b.SetEntrypoint("ask")
	_ = b.AddStep("ask", func(_ context.Context, s Chat) (Chat, error) { return s, nil },
		durable.WithDecide(func(_ context.Context, s Chat) (durable.RouteDecision, error) {
			return durable.Map("done", "answer", s.Experts), nil
		}))
	_ = b.AddStep("answer", func(ctx context.Context, s Chat) (Chat, error) {
		expert, err := durable.BranchItem[string](ctx)
		if err != nil {
			return s, err
		}
		reply := message.AI(expert + " says hello")
		reply.Name = expert
		s.Messages, err = message.Add(s.Messages, reply)
		return s, err
	})
	_ = b.AddStep("done", func(_ context.Context, s Chat) (Chat, error) { return s, nil }, durable.Terminal())
	_ = b.Reduce("messages", message.AddMessages)
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "panel", InstanceID: "p1",
		Input: json.RawMessage(`{"experts":["ada","alan"],"messages":[{"role":"user","content":"hi all"}]}`)})
	run, _ := e.WaitRun(ctx, "p1", nil)
	s, err := engine.DecodeState[Chat](run)
	if err != nil {
		panic(err)
	}
	fmt.Println(run.RuntimeStatus)
	for _, m := range s.Messages {
		fmt.Println(m.Type, m.Text())
	}
	// Output:
	// Completed
	// human hi all
	// ai ada says hello
	// ai alan says hello
}
