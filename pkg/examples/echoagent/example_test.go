package echoagent_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/host"
)

func ExampleNew() {
	g := echoagent.New(echoagent.Options{})
	out, _ := g.Invoke(context.Background(), host.Request{
		Input:  []byte(`{"messages":[{"role":"user","content":"hi"}]}`),
		Config: host.Config{ThreadID: "t1"},
	})
	fmt.Printf("%+v\n", out)
	// Output:
	// {Messages:[{Role:user Content:hi} {Role:assistant Content:hi}]}
}

func ExampleGraph_StreamModes() {
	g := echoagent.New(echoagent.Options{})
	req := host.Request{Input: []byte(`{"messages":[{"role":"user","content":"hi"}]}`), Config: host.Config{ThreadID: "t1"}}
	_ = g.StreamModes(context.Background(), req, []string{"values", "updates"}, func(mode string, chunk any) error {
		fmt.Printf("%s %+v\n", mode, chunk)
		return nil
	})
	// Output:
	// values {Messages:[{Role:user Content:hi} {Role:assistant Content:hi}]}
	// updates map[echo:{Messages:[{Role:user Content:hi} {Role:assistant Content:hi}]}]
}
