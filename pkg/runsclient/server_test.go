package runsclient_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// testKey is the function key of the test servers.
const testKey = "test-function-key-5f1c"

// server is the runs API on a real engine, served over HTTP with function auth.
type server struct {
	url    string
	engine *engine.Engine
}

// serveEngine serves the runs API over eng (started when start) with function auth and the
// key testKey.
func serveEngine(t *testing.T, eng *engine.Engine, reg *durable.Registry, start bool) *server {
	t.Helper()
	if start {
		if err := eng.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = eng.Close() })
	logger := funchosttest.TestLogger(t)
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": testKey}}, Logger: logger}))
	t.Cleanup(srv.Close)
	return &server{url: srv.URL, engine: eng}
}

// serveMemory serves the example graphs (and extra) on an in-memory engine.
func serveMemory(t *testing.T, extra ...durable.Graph) *server {
	t.Helper()
	reg := runsapitest.Registry(t, examples.All)
	for _, g := range extra {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(),
		Payloads: memory.NewPayloadStore(), Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return serveEngine(t, eng, reg, true)
}

// client is a client of s with its key.
func (s *server) client(t *testing.T, opts ...runsclient.Option) *runsclient.Client {
	t.Helper()
	c, err := runsclient.New(s.url+"/api", append([]runsclient.Option{runsclient.WithFunctionKey(testKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serveTransports serves the example graphs' runs API on an in-memory engine behind both
// transports: the standalone server (the feed streams) and the emulated Functions host
// without proxying (each answer of the feed is one long poll).
func serveTransports(t *testing.T) []funchosttest.Transport {
	t.Helper()
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
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	return funchosttest.Transports(t, app)
}
