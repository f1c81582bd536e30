package weatheragent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/agent"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// TestAgent_AnswersWithTheTool is the front page's kit test: scripted model turns, the real tool.
func TestAgent_AnswersWithTheTool(t *testing.T) {
	script := model.NewScript( // the model's two turns: call the tool, then answer
		message.AI("", message.ToolCall{ID: "c1", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}),
		message.AI("It is 18°C and sunny in Oslo."))
	g, err := New(script)
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	kit.Start("r1", agent.State{Messages: []message.Message{message.Human("Weather in Oslo?")}})
	final := kit.Final("r1") // human, ai (tool call), tool, ai
	if final.Messages[2].Text() != "18°C and sunny in Oslo" || final.Usage.ModelCalls != 2 {
		t.Fatalf("conversation %+v, usage %+v", final.Messages, final.Usage)
	}
}

// TestReadmeShowsThisAgent keeps the README's agent listings and this package identical: all
// of agent.go after its package clause, and the test above.
func TestReadmeShowsThisAgent(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("agent.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(src), "package weatheragent\n")
	if !strings.Contains(string(readme), "```go"+code+"```") {
		t.Error("README's agent listing differs from pkg/examples/weatheragent/agent.go")
	}
	test, err := os.ReadFile("agent_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, fn, _ := strings.Cut(string(test), "\nfunc TestAgent_AnswersWithTheTool")
	fn, _, _ = strings.Cut(fn, "\n}\n")
	if !strings.Contains(string(readme), "```go\nfunc TestAgent_AnswersWithTheTool"+fn+"\n}\n```") {
		t.Error("README's agent test differs from TestAgent_AnswersWithTheTool")
	}
}
