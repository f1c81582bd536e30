package anthropic_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic/anthropictest"
)

// A model on Anthropic, its reply streamed. The app reads the key from its settings; here
// a fake server stands in for Anthropic.
func ExampleNew() {
	srv := anthropictest.NewServer(anthropictest.Text("Hello from Claude."))
	defer srv.Close()

	m, err := anthropic.New(anthropic.Config{
		APIKey:  anthropictest.APIKey, // os.Getenv("ANTHROPIC_API_KEY") in the app's main
		BaseURL: srv.URL,              // empty: Anthropic's
		Model:   "claude-haiku-5-5",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var pieces []string
	resp, err := m.Generate(context.Background(), model.Request{
		Messages: []message.Message{message.System("Be brief."), message.Human("Say hello.")},
		OnText:   func(s string) error { pieces = append(pieces, s); return nil },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(pieces, "|"))
	fmt.Println(resp.Message.Text(), resp.StopReason, resp.Model)
	// Output:
	// Hell|o fr|om C|laud|e.
	// Hello from Claude. stop claude-haiku-5-5
}
