//go:build integration

package exampleapp_test

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestIntegrationResearchAgent_RunsUnderTheHostOnAzurite: the staged example app under the
// host emulator, its runs on Azurite: a research_agent run started over HTTP fans out into
// search branches that run in queue-triggered fg_orchestrator invocations (the flaky one again
// after its back-off, a delayed queue message), joins with the findings in source order,
// waits for approval and completes on it, its feed showing every branch and emitted event.
func TestIntegrationResearchAgent_RunsUnderTheHostOnAzurite(t *testing.T) {
	bin := os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN")
	if bin == "" {
		t.Fatal("FUNCGRAPH_TEST_HANDLER_BIN is not set: run integration tests through `make test`")
	}
	a := startFunctionsApp(t, bin, 0, nil, nil)
	final := driveResearchAgent(t, a.do, "research-1", []string{"arxiv", "wikipedia", "news", "blogs"}, 2*time.Minute)
	if final.Escalated || final.Revisions != 0 || len(final.Findings) != 4 || final.Findings[1].Attempts != 2 {
		t.Errorf("final state %+v", final)
	}
	if logs := a.logs.String(); !strings.Contains(logs, "embedded_dispatcher=false") || strings.Contains(logs, "durable engine started") {
		t.Errorf("the handler ran its own dispatcher under the host: the queue triggers proved nothing\n%s", logs)
	}
}
