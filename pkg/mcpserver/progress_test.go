package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/protocoltest"
	"github.com/funcgraph/funcgraph/pkg/mcpserver"
)

// TestProgress_ACallWithAProgressTokenSeesTheRunAsItGoes: a tools/call with a progress token
// gets, before its result, a progress notification per row of the run's feed and per chunk
// its step writes — the chunks while the step still runs: the node writes two and waits until
// the client has seen the first.
func TestProgress_ACallWithAProgressTokenSeesTheRunAsItGoes(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	eng, reg := protocoltest.Talker(t, release, engine.Options{}, "Hel", "lo")
	app := mcpApp(t, mcpserver.Options{Runs: eng, Registry: reg})
	for _, tr := range funchosttest.Transports(t, app) {
		if tr.Name != funchosttest.TransportStandalone {
			continue // the emulated host buffers the stream: the node would wait for ever
		}
		var mu sync.Mutex
		var got []*mcp.ProgressNotificationClientRequest
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, n *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
				if n.Params.Message == "messages: Hel" {
					once.Do(func() { close(release) })
				}
			},
		})
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: tr.BaseURL + "/api/mcp",
			HTTPClient: &http.Client{Transport: headers{h: http.Header{"X-Functions-Key": {tr.FunctionKey}}, next: http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		params := &mcp.CallToolParams{Name: protocoltest.TalkerGraph, Arguments: map[string]any{}}
		params.SetProgressToken("p-1")
		res, err := cs.CallTool(t.Context(), params)
		_ = cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(res.StructuredContent)
		if res.IsError || !strings.Contains(string(out), `"said":"Hello"`) {
			mu.Lock()
			for _, n := range got {
				t.Logf("progress %v %q", n.Params.Progress, n.Params.Message)
			}
			mu.Unlock()
			t.Fatalf("result: %s %v", out, res.Content[0].(*mcp.TextContent).Text)
		}
		mu.Lock()
		var msgs []string
		for i, n := range got {
			if n.Params.ProgressToken != "p-1" || n.Params.Progress != float64(i+1) {
				t.Errorf("notification %d: token %v progress %v", i, n.Params.ProgressToken, n.Params.Progress)
			}
			msgs = append(msgs, n.Params.Message)
		}
		mu.Unlock()
		for _, want := range []string{"messages: Hel", "messages: lo"} {
			if !slices.Contains(msgs, want) {
				t.Fatalf("progress messages %q, want %q among them", msgs, want)
			}
		}
	}
}
