package launch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Reply string `json:"reply"`
}

// Assemble builds a whole app on the settings' stores: hosted graphs, durable graphs with
// the runs API and worker functions, and (Platform: true) the LangGraph-Platform routes.
// The Assembly gives the app its engine, e.g. for a route of its own that starts runs.
func ExampleAssemble() {
	b := durable.NewManifestBuilder[order]("orders")
	b.SetEntrypoint("ship")
	_ = b.AddStep("ship", func(_ context.Context, o order) (order, error) { o.Done = true; return o, nil }, durable.Terminal())
	g, _ := b.Build()

	a, err := launch.Assemble(launch.Settings{}, launch.Spec{
		Hosted: []launch.Hosted{{Name: "echo", Graph: host.Func[echoIn, echoOut](func(_ context.Context, in echoIn) (echoOut, error) {
			return echoOut{Reply: in.Text}, nil
		})}},
		Durable: []durable.Graph{g},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	_ = a.Start(ctx) // the embedded dispatcher: no storage configured, so memory
	defer a.Close()

	srv := httptest.NewServer(a.Host.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/graphs/echo/invoke", strings.NewReader(`{"input":{"text":"hi"}}`))
	req.Header.Set("x-functions-key", "k")
	req.Header.Set("content-type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, strings.TrimSpace(string(body)))

	run, _ := a.Engine.StartRun(ctx, engine.StartRunRequest{GraphName: "orders", InstanceID: "o-1", Input: []byte(`{"item":"book"}`)})
	run, _ = a.Engine.WaitRun(ctx, run.InstanceID, func(r engine.Run) bool { return r.RuntimeStatus.Finished() })
	out, _ := engine.DecodeOutput[order](run)
	fmt.Println(run.RuntimeStatus, out.State.Done)
	// Output:
	// 200 {"output":{"reply":"hi"}}
	// Completed true
}
