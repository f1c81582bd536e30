package funchost_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

var errTestDrain = errors.New("test: drained")

// drainingHandler waits on funchost.UntilDrain of its request (entered says it is waiting)
// and answers "drained" when its server's shutdown ended the wait, "request ended" otherwise.
// It never ends its wait by itself within a test's life.
func drainingHandler(entered chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, stop := funchost.UntilDrain(r.Context(), errTestDrain)
		defer stop()
		entered <- struct{}{}
		select {
		case <-ctx.Done():
		case <-time.After(time.Hour):
		}
		if funchost.Drained(ctx, errTestDrain) {
			_, _ = io.WriteString(w, "drained")
			return
		}
		_, _ = io.WriteString(w, "request ended")
	})
}

// TestServer_Shutdown_EndsDrainWaits: a request waiting on UntilDrain is answered, completely,
// as soon as its server begins to shut down, where without the drain the shutdown would hold
// it for the whole ShutdownTimeout and then cut it; Serve returns nil.
func TestServer_Shutdown_EndsDrainWaits(t *testing.T) {
	entered := make(chan struct{}, 1)
	base, stop := serveTest(t, funchost.ServerConfig{ShutdownTimeout: 20 * time.Second}, drainingHandler(entered))
	type answer struct {
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := http.Get(base + "/wait")
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		got <- answer{string(b), err}
	}()
	<-entered
	served := make(chan error, 1)
	go func() { served <- stop() }()
	a := <-got
	if a.err != nil || a.body != "drained" {
		t.Fatalf("answer %q, %v; want drained", a.body, a.err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestUntilDrain_WithoutServer: for a context no Server gave, the copy ends with its parent
// only, not drained.
func TestUntilDrain_WithoutServer(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, stop := funchost.UntilDrain(parent, errTestDrain)
	defer stop()
	if ctx.Err() != nil {
		t.Fatal("ended at once")
	}
	cancel()
	<-ctx.Done()
	if funchost.Drained(ctx, errTestDrain) {
		t.Fatal("a cancelled parent reads as drained")
	}
}
