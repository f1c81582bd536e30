package durable_test

import (
	"context"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// ChatTurn is the state of a graph whose node answers like a model: piece by piece.
type ChatTurn struct {
	Prompt string `json:"prompt" durable:"required"`
	Answer string `json:"answer"`
}

// A step writes the pieces of its reply while it produces them: whoever watches the run (the
// runs API's feed, the platform's messages-tuple stream) sees each piece at once, before the
// step commits the whole answer to the state.
func ExampleWriteMessageChunk() {
	b := durable.NewManifestBuilder[ChatTurn]("reply")
	b.SetEntrypoint("answer")
	_ = b.AddStep("answer", func(ctx context.Context, s ChatTurn) (ChatTurn, error) {
		for _, piece := range []string{"Hel", "lo"} { // a model's tokens, as they come
			if err := durable.WriteMessageChunk(ctx, piece); err != nil {
				return s, err
			}
			s.Answer += piece
		}
		return s, nil
	}, durable.Terminal())
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Live: memory.NewLiveStore(), PollInterval: 10 * time.Millisecond, Logger: quietLog})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "reply", InstanceID: "r1", Input: []byte(`{"prompt":"hi"}`)})
	_, _ = e.WaitRun(ctx, "r1", nil)
	page, _ := e.Feed(ctx, "r1", engine.FeedQuery{Live: true})
	for _, r := range page.Live {
		if r.Kind == engine.LiveChunk { // then the step's commit record makes them final
			fmt.Println(r.Name, string(r.Data))
		}
	}
	// Output:
	// messages {"type":"AIMessageChunk","content":"Hel"}
	// messages {"type":"AIMessageChunk","content":"lo"}
}
