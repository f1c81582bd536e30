package message_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/message"
)

// Add appends, replaces by ID and removes by ID, as LangGraph's add_messages.
func ExampleAdd() {
	list := []message.Message{
		{Type: message.TypeHuman, Content: message.Text("hi"), ID: "1"},
		{Type: message.TypeAI, Content: message.Text("draft"), ID: "2"},
	}
	list, err := message.Add(list,
		message.Message{Type: message.TypeAI, Content: message.Text("final"), ID: "2"}, // replaces "2" in place
		message.Remove("1"),     // deletes "1"
		message.Human("thanks"), // appended, with a derived ID
	)
	if err != nil {
		panic(err)
	}
	for _, m := range list {
		fmt.Println(m.Type, m.Text())
	}
	_, err = message.Add(list, message.Remove("nope"))
	fmt.Println(err)
	// Output:
	// ai final
	// human thanks
	// remove "nope": message: attempting to delete a message with an ID that doesn't exist
}

// A message decodes from an OpenAI-style dict as LangGraph coerces it: the assistant's
// function calls become tool calls, their arguments (a JSON string) parsed.
func ExampleMessage_UnmarshalJSON() {
	var m message.Message
	err := json.Unmarshal([]byte(`{"role": "assistant", "content": null,
		"tool_calls": [{"id": "call_1", "type": "function",
			"function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]}`), &m)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Type, m.ToolCalls[0].Name, string(m.ToolCalls[0].Args))
	b, _ := json.Marshal(m)
	fmt.Println(string(b))
	// Output:
	// ai weather {"city":"Oslo"}
	// {"content":"","additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":null,"tool_calls":[{"name":"weather","args":{"city":"Oslo"},"id":"call_1","type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":null}
}

// Chat is the state of a graph whose experts answer side by side.
type Chat struct {
	Experts  []string          `json:"experts" durable:"required"`
	Messages []message.Message `json:"messages"`
}

// AddMessages merges the messages each branch of a fan-out added, in branch order, as
// add_messages merges the updates of parallel nodes.
func ExampleAddMessages() {
	b := durable.NewManifestBuilder[Chat]("panel")
	b.SetEntrypoint("ask")
	_ = b.AddStep("ask", func(_ context.Context, s Chat) (Chat, error) { return s, nil },
		durable.WithHandlerName("panel.ask"),
		durable.WithDecide(func(_ context.Context, s Chat) (durable.RouteDecision, error) {
			return durable.Map("done", "answer", s.Experts), nil
		}), durable.WithRouteName("panel.fan_out"))
	_ = b.AddStep("answer", func(ctx context.Context, s Chat) (Chat, error) {
		expert, err := durable.BranchItem[string](ctx)
		if err != nil {
			return s, err
		}
		reply := message.AI(expert + " says hello")
		reply.ID = "reply-" + expert // an ID of the branch's own: branches never collide
		s.Messages, err = message.Add(s.Messages, reply)
		return s, err
	}, durable.WithHandlerName("panel.answer"))
	_ = b.AddStep("done", func(_ context.Context, s Chat) (Chat, error) { return s, nil },
		durable.WithHandlerName("panel.done"), durable.Terminal())
	_ = b.Reduce("messages", message.AddMessages)
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "panel", InstanceID: "p1",
		Input: json.RawMessage(`{"experts":["ada","alan"],"messages":[{"role":"user","content":"hello?"}]}`)})
	run, _ := e.WaitRun(ctx, "p1", nil)
	s, _ := engine.DecodeState[Chat](run)
	fmt.Println(run.RuntimeStatus)
	for _, m := range s.Messages {
		fmt.Println(m.Type, m.Text())
	}
	// Output:
	// Completed
	// human hello?
	// ai ada says hello
	// ai alan says hello
}
