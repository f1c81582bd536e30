package a2aserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/a2aserver"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A durable graph served as an A2A agent: a text message starts a run, answered with the
// completed task.
func ExampleNew() {
	reg := durable.NewRegistry()
	_ = reg.Register(examples.MustSupportAgent())
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: quiet})
	_ = eng.Start(context.Background())
	defer eng.Close()

	srv, err := a2aserver.New(a2aserver.Options{Runs: eng, Registry: reg, Logger: quiet,
		AuthLevel: funchost.AuthAnonymous, TextFields: map[string]string{"support_agent": "user_message"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	app := funchost.NewFunctionApp()
	_ = srv.Register(app)
	ts := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{}))
	defer ts.Close()

	res, err := http.Post(ts.URL+"/api/a2a/support_agent", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, strings.Contains(string(body), `"state":"TASK_STATE_COMPLETED"`))
	// Output: 200 true
}
