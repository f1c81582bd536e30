package openaitest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/openai"
	"github.com/funcgraph/funcgraph/pkg/model/openai/openaitest"
)

// A test scripts a tool call and a final answer, runs the code under test against the
// fake, and asserts how many times the model was requested and what it was sent.
func Example() {
	api := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		openaitest.Reply{Text: "Snow in Oslo.", Usage: openaitest.Usage{PromptTokens: 40, CompletionTokens: 4, CachedTokens: 32}},
	)
	defer api.Close()
	m, err := openai.New(openai.Config{APIKey: "sk-test", Model: "gpt-test", BaseURL: api.BaseURL()})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	msgs := []message.Message{message.Human("Weather in Oslo?")}
	first, err := m.Generate(ctx, model.Request{Messages: msgs})
	if err != nil {
		log.Fatal(err)
	}
	call := first.Message.ToolCalls[0]
	msgs = append(msgs, first.Message, message.ToolResult(call, "snow"))
	final, err := m.Generate(ctx, model.Request{Messages: msgs})
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(call.Name, string(call.Args))
	fmt.Println(final.Message.Text(), final.Usage.CachedInputTokens)
	fmt.Println("requests:", api.Count())
	last := api.Requests()[1].Body.Messages
	fmt.Println(last[2].Role, last[2].ToolCallID, last[2].Text())
	// Output:
	// get_weather {"city":"Oslo"}
	// Snow in Oslo. 32
	// requests: 2
	// tool call_1 snow
}
