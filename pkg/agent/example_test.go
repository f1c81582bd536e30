package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/funcgraph/funcgraph/pkg/agent"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

type cityIn struct {
	City string `json:"city"`
}

// An agent is a durable graph: here on a scripted model, run on an engine in memory (the test kit, pkg/durabletest, does the same in a test). The model asks for
// the tool, the tool's result goes back to it, and its answer ends the run.
func ExampleNew() {
	weather := tool.Must(tool.New("get_weather", "The weather in a city.", func(_ context.Context, in cityIn) (string, error) {
		return "sunny in " + in.City, nil
	}))
	script := model.NewScript(
		message.AI("", message.ToolCall{ID: "c1", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}),
		message.AI("It is sunny in Oslo."))
	g, err := agent.New(agent.Config{Name: "weather", Model: script, Tools: []*tool.Tool{weather}})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), PollInterval: 10 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "weather", InstanceID: "r1",
		Input: []byte(`{"messages": [{"role": "user", "content": "Weather in Oslo?"}]}`)})
	run, _ := e.WaitRun(ctx, "r1", nil)
	final, err := engine.DecodeState[agent.State](run)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range final.Messages {
		fmt.Printf("%s: %q\n", m.Type, m.Text())
	}
	// Output:
	// human: "Weather in Oslo?"
	// ai: ""
	// tool: "sunny in Oslo"
	// ai: "It is sunny in Oslo."
}

// Add puts an agent's nodes on a builder of your own, so that nodes of yours lead to it and follow
// it (Config.Then).
func ExampleAdd() {
	fmt.Println(agent.NodeModel, agent.NodeTools, agent.ToolNode("get_weather"), agent.EventApproval)
	// Output: model tools tool_get_weather approval
}
