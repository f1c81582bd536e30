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
