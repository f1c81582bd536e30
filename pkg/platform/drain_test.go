package platform_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// TestDurableJoin_ServerShutdown_AnswersAsAtTheBound: a server that begins to shut down answers
// the joins waiting on a durable background run at once, as at the wait bound — the join 202
// with its Location, the joined stream ended without its end frame (the SDKs join again) — where
// they would otherwise hold the shutdown for its whole ShutdownTimeout and then be cut.
func TestDurableJoin_ServerShutdown_AnswersAsAtTheBound(t *testing.T) {
	g := &gates{}
	app := liveFunctionApp(t, g)
	var active atomic.Int32
	cfg := funchost.ServerConfig{ShutdownTimeout: 20 * time.Second, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateActive {
			active.Add(1)
		}
	}}
	keys := funchost.Keys{Master: "drain-master-key", HostFunction: map[string]string{"default": "drain-function-key"}}
	srv, err := funchost.NewServer(cfg, app.Standalone(funchost.StandaloneOptions{Keys: keys, Logger: funchosttest.TestLogger(t)}), funchosttest.TestLogger(t))
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
	t.Cleanup(func() { shutdown(); _ = srv.Close(); close(g.get("held")) })
	tr := funchosttest.Transport{Name: funchosttest.TransportStandalone, BaseURL: "http://" + ln.Addr().String(), FunctionKey: "drain-function-key"}

	tid := newLiveThread(t, tr)
	var run struct {
		RunID string `json:"run_id"`
	}
	call(t, tr, "POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"live_reply","input":{"gate":"held"},"stream_mode":["messages-tuple"]}`, &run)
	stream := open(t, tr, "GET", "/api/threads/"+tid+"/runs/"+run.RunID+"/stream", "")
	stream.until(t, "the first piece", isEvent("messages", `"Hel1"`)) // the node now waits on its gate

	type answer struct {
		status   int
		location string
		err      error
	}
	joined := make(chan answer, 1)
	before := active.Load()
	go func() {
		req, _ := http.NewRequest("GET", tr.BaseURL+"/api/threads/"+tid+"/runs/"+run.RunID+"/join", nil)
		req.Header.Set("x-functions-key", tr.FunctionKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			joined <- answer{err: err}
			return
		}
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		joined <- answer{res.StatusCode, res.Header.Get("Location"), err}
	}()
	for active.Load() == before { // the join's request has reached the server
		time.Sleep(time.Millisecond)
	}
	shutdown()

	if a := <-joined; a.err != nil || a.status != http.StatusAccepted || a.location == "" {
		t.Errorf("join: %d Location %q, %v; want 202 with a Location", a.status, a.location, a.err)
	}
	for {
		f, err := stream.next()
		if errors.Is(err, io.EOF) {
			break // a clean end
		}
		if err != nil {
			t.Fatalf("the joined stream was cut: %v", err)
		}
		if f.event == "end" {
			t.Fatalf("the joined stream sent its end frame")
		}
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
