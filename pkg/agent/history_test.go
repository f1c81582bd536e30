package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/agent"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

// TestAgent_History_GrowsWithTheConversation: an agent that calls a tool with a 1 KB result on
// each of 40 turns stores a small multiple of its final conversation in history, not its
// square: its rows record what each step added (the messages' reducer), and a tool branch's
// row holds its tool message alone. Each tool result is in history twice, in its branch's row
// and in the join's update, so a conversation of tool results stores about 2.2×
// (docs/agents.md); whole-state rows stored 21.8× here.
func TestAgent_History_GrowsWithTheConversation(t *testing.T) {
	t.Parallel()
	const turns = 40
	fetch := tool.Must(tool.New("fetch", "Fetch a page.", func(_ context.Context, in searchIn) (string, error) {
		return in.Query + ": " + strings.Repeat("x", 1000), nil
	}))
	var replies []message.Message
	for i := range turns {
		replies = append(replies, message.AI("", call(fmt.Sprintf("c%d", i), "fetch", fmt.Sprintf(`{"query":"page %d"}`, i))))
	}
	replies = append(replies, message.AI("Read them all."))
	g, err := agent.New(agent.Config{Name: "reader", Model: model.NewScript(replies...), Tools: []*tool.Tool{fetch}, MaxTurns: turns + 1})
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{})
	if run := kit.Start("r", input("read 40 pages")); run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("status %s: %s", run.RuntimeStatus, run.FailureMessage())
	}
	final, err := json.Marshal(kit.Final("r"))
	if err != nil {
		t.Fatal(err)
	}
	history := 0
	byType := map[string]int{}
	for _, h := range kit.History("r") {
		history += len(h.Data)
		byType[h.Type] += len(h.Data)
	}
	t.Logf("by row type: %v", byType)
	t.Logf("%d turns: history %d bytes, final state %d bytes (%.2f×)", turns, history, len(final), float64(history)/float64(len(final)))
	if 2*history > 5*len(final) {
		t.Fatalf("history %d bytes for a final state of %d: more than 2.5 times", history, len(final))
	}
}
