package launch_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// healthDetails answers GET /api/health/details of h.
func healthDetails(t *testing.T, h *host.GraphHostApp) string {
	t.Helper()
	srv := httptest.NewServer(h.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}}))
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/health/details", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-functions-key", "k")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("health details: %d %s %v", res.StatusCode, b, err)
	}
	return string(b)
}

// logSink collects log lines.
type logSink struct{ strings.Builder }

// Issue #32: an instance started without a graph version that still has unfinished runs says
// so at start — a warning naming the version, and "unregistered_versions" in the health
// details — from the active run index; an instance that has every version in flight lists
// none.
func TestMountDurable_ReportsUnregisteredVersionsAtStart(t *testing.T) {
	t.Parallel()
	st := launch.Durable{}.OrMemory()
	v1, v2 := enginetest.ApprovalGraph(t, "1"), enginetest.ApprovalGraph(t, "2")
	mount := func(logs *logSink, gs ...durable.Graph) *host.GraphHostApp {
		t.Helper()
		reg := regOf(t, gs...)
		h, err := host.New(host.Options{Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := launch.MountDurable(st, h, reg, launch.DurableOptions{Engine: engine.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = eng.Close() })
		return h
	}
	if body := healthDetails(t, mount(&logSink{}, v1)); !strings.Contains(body, `"unregistered_versions":[]`) {
		t.Fatalf("health details of the first instance: %s, want no unregistered version", body)
	}
	oldEng, err := engine.New(st.EngineOptions(engine.Options{Registry: regOf(t, v1), Logger: discard()}))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := oldEng.StartRun(context.Background(), engine.StartRunRequest{GraphName: "approvals", Input: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}

	logs := &logSink{}
	body := healthDetails(t, mount(logs, v2))
	want := `"unregistered_versions":[{"graph_name":"approvals","graph_version":"1","graph_hash":"` + v1.Manifest().GraphHash + `","unfinished_runs":3}]`
	if !strings.Contains(body, want) {
		t.Fatalf("health details: %s\nwant %s", body, want)
	}
	if line := logs.String(); !strings.Contains(line, "level=WARN") || !strings.Contains(line, "graph_hash="+v1.Manifest().GraphHash) ||
		!strings.Contains(line, "unfinished_runs=3") {
		t.Fatalf("start logs lack the warning: %s", line)
	}
}

// regOf returns a registry of gs.
func regOf(t *testing.T, gs ...durable.Graph) *durable.Registry {
	t.Helper()
	reg := durable.NewRegistry()
	for _, g := range gs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}
