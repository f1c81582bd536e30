package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// Reply is the state of the Write example.
type Reply struct {
	Text string `json:"text"`
}

// A node sends its tokens with Write while it runs; a client following the run's feed with its
// live channel reads them before the step commits, each with its writer, then the record that
// makes them final.
func ExampleWrite() {
	b := durable.NewManifestBuilder[Reply]("speaker")
	b.SetEntrypoint("speak")
	_ = b.AddNode("speak", func(ctx context.Context, r Reply) (any, error) {
		for _, tok := range []string{"Hel", "lo", "!"} {
			r.Text += tok
			_ = durable.Write(ctx, "token", tok)
		}
		return r, nil
	}, durable.Terminal())
	g, _ := b.Build()

	reg := durable.NewRegistry()
	_ = reg.Register(g)
	e, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Live: memory.NewLiveStore(), Logger: quietLog})
	ctx := context.Background()
	_ = e.Start(ctx)
	defer e.Close()
	_, _ = e.StartRun(ctx, engine.StartRunRequest{GraphName: "speaker", InstanceID: "s1", Input: json.RawMessage(`{}`)})
	q := engine.FeedQuery{Wait: 5 * time.Second, Live: true}
	for {
		page, err := e.Feed(ctx, "s1", q)
		if err != nil {
			panic(err)
		}
		for _, r := range page.Live {
			fmt.Println(r.Kind, r.Name, string(r.Data))
		}
		q.After, q.Run, q.LiveAfter = page.NextAfter, page.Run, page.LiveNext
		if page.End {
			break
		}
	}
	// Output:
	// chunk token "Hel"
	// chunk token "lo"
	// chunk token "!"
	// commit
}
