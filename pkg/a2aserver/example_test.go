package a2aserver_test

import (
	"context"
	"encoding/json"
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
	"github.com/funcgraph/funcgraph/pkg/host"
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

// A hosted graph served as an A2A agent (Options.Hosted): a message runs it within the
// request and is answered by a message of the agent.
func ExampleOptions_hosted() {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, _ := host.New(host.Options{Logger: quiet, AuthLevel: funchost.AuthAnonymous})
	type greeting struct {
		Name string `json:"name"`
	}
	hello := host.Func[greeting, map[string]string](func(_ context.Context, in greeting) (map[string]string, error) {
		return map[string]string{"greeting": "hello, " + in.Name}, nil
	})
	_ = h.Register(hello, "hello", host.RegisterOptions{})
	reg := durable.NewRegistry()
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: quiet})

	srv, _ := a2aserver.New(a2aserver.Options{Runs: eng, Registry: reg, Hosted: h, Logger: quiet, AuthLevel: funchost.AuthAnonymous})
	app := funchost.NewFunctionApp()
	_ = srv.Register(app)
	ts := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{}))
	defer ts.Close()

	res, err := http.Post(ts.URL+"/api/a2a/hello", "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"name":"Ada"}}]}}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	var answer struct {
		Result a2aserver.SendMessageResponse `json:"result"`
	}
	_ = json.NewDecoder(res.Body).Decode(&answer)
	m := answer.Result.Message
	fmt.Println(m.Role, string(m.Parts[0].Data))
	// Output: ROLE_AGENT {"greeting":"hello, Ada"}
}
