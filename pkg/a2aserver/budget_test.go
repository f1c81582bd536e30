package a2aserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/a2aserver"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// A message whose declared body the memory budget has no room for is refused 507 before its
// body is read, and starts no run; one that fits starts a task.
func TestServer_PastTheMemoryBudget_Refused507(t *testing.T) {
	b, err := membudget.New(membudget.Limits{Total: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Grow(t.Context(), "", 6500); err != nil { // 500 bytes left for new work
		t.Fatal(err)
	}
	reg := durable.NewRegistry()
	if err := reg.Register(examples.MustSupportAgent()); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := a2aserver.New(a2aserver.Options{Runs: eng, Registry: reg, MemoryBudget: b, AuthLevel: funchost.AuthAnonymous,
		TextFields: map[string]string{"support_agent": "user_message"}, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	app := funchost.NewFunctionApp()
	if err := srv.Register(app); err != nil {
		t.Fatal(err)
	}
	h := app.Standalone(funchost.StandaloneOptions{})
	send := func(text string) (int, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},` +
			`"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}}`
		r := httptest.NewRequest("POST", "/api/a2a/support_agent", strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	if code, body := send(strings.Repeat("x", 600)); code != 507 {
		t.Fatalf("past the budget: %d %s", code, body)
	}
	list, err := eng.ListRuns(context.Background(), engine.RunQuery{})
	if err != nil || len(list.Runs) != 0 {
		t.Fatalf("runs after a refused message: %v %v", list.Runs, err)
	}
	if code, body := send("hi"); code != 200 || !strings.Contains(body, `"task"`) {
		t.Fatalf("a message that fits: %d %s", code, body)
	}
}
