package runsapi_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestFeed_ServerShutdown_EndsWaitingFeeds: a server that begins to shut down ends the feed
// requests waiting on a run that does not move — a long poll answers its page (200, no
// items), an event stream ends cleanly with a retry frame and no end event — at once, where
// they would otherwise hold the shutdown for its whole ShutdownTimeout and then be cut (a
// read that fails). Serve returns nil, and the run is untouched.
func TestFeed_ServerShutdown_EndsWaitingFeeds(t *testing.T) {
	reg := runsapitest.Registry(t, examples.All)
	logger := funchosttest.TestLogger(t)
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	w := &watchedFeeds{Engine: eng, waiting: map[string]chan struct{}{}}
	svc, err := runsapi.NewService(runsapi.Options{Runs: w, Registry: reg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	keys := funchost.Keys{Master: "drain-master-key", HostFunction: map[string]string{"default": "drain-function-key"}}
	srv, err := funchost.NewServer(funchost.ServerConfig{ShutdownTimeout: 20 * time.Second},
		app.Standalone(funchost.StandaloneOptions{Keys: keys, Logger: logger}), logger)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, shutdown := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { shutdown(); _ = srv.Close() })
	tr := funchosttest.Transport{Name: funchosttest.TransportStandalone, BaseURL: "http://" + ln.Addr().String(), FunctionKey: "drain-function-key", MasterKey: "drain-master-key"}

	id := "drained"
	runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund please"}`)
	runsapitest.Poll(t, tr, id, runsapitest.Waiting)
	last := runsapitest.Feed(t, tr, id, "wait=0").NextAfter

	type answer struct {
		status int
		body   string
		err    error
	}
	get := func(query, accept string) <-chan answer {
		out := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/runs/%s/feed?%s", tr.BaseURL, id, query), nil)
			req.Header.Set("x-functions-key", tr.FunctionKey)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				out <- answer{err: err}
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			out <- answer{res.StatusCode, string(b), err}
		}()
		return out
	}
	poll := get(fmt.Sprintf("after=%d&wait=150", last), "")
	<-w.signal(id)
	stream := get(fmt.Sprintf("after=%d", last), "text/event-stream")
	<-w.signal(id) // the stream's first page is out; it waits for the next
	shutdown()

	if a := <-poll; a.err != nil || a.status != 200 || !strings.Contains(a.body, `"items": []`) {
		t.Errorf("long poll: %d %q %v; want 200 with no items", a.status, a.body, a.err)
	}
	a := <-stream
	if a.err != nil || a.status != 200 || !strings.HasSuffix(a.body, "retry: 500\n\n") || strings.Contains(a.body, "event: end") {
		t.Errorf("event stream: %d %q %v; want 200 ending with a retry frame, no end event", a.status, a.body, a.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if run, err := eng.GetRun(context.Background(), id); err != nil || run.RuntimeStatus != engine.StatusRunning {
		t.Fatalf("the run after the shutdown: %v %v, want Running", run.RuntimeStatus, err)
	}
}
