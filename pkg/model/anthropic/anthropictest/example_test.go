package anthropictest_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic/anthropictest"
)

// A fake Messages API answering an adapter's two calls: a tool call, then the answer.
func ExampleNewServer() {
	srv := anthropictest.NewServer(
		anthropictest.Reply{Content: []anthropictest.Block{anthropictest.ToolUse("toolu_1", "get_weather", `{"city":"Paris"}`)}},
		anthropictest.Text("Sunny in Paris."),
	)
	defer srv.Close()
	m, err := anthropic.New(anthropic.Config{APIKey: anthropictest.APIKey, BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	msgs := []message.Message{message.Human("Weather in Paris?")}
	first, err := m.Generate(context.Background(), model.Request{Messages: msgs})
	if err != nil {
		fmt.Println(err)
		return
	}
	call := first.Message.ToolCalls[0]
	msgs = append(msgs, first.Message, message.ToolResult(call, "sunny, 21 C"))
	second, err := m.Generate(context.Background(), model.Request{Messages: msgs})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(first.StopReason, call.Name, string(call.Args))
	fmt.Println(second.StopReason, second.Message.Text())
	last := srv.Requests()[1].Messages[2].Content[0]
	fmt.Println(srv.Count(), "requests; the last answered", last.ToolUseID, "with a", last.Type)
	// Output:
	// tool_calls get_weather {"city":"Paris"}
	// stop Sunny in Paris.
	// 2 requests; the last answered toolu_1 with a tool_result
}
