package a2aserver_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/a2aserver"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/protocoltest"
)

// TestStream_LiveChunksArriveWhileTheStepRuns: a streamed task carries the chunks its step
// writes as artifact updates, while the step runs: the node writes one and waits until the
// client has read it from the stream.
func TestStream_LiveChunksArriveWhileTheStepRuns(t *testing.T) {
	release := make(chan struct{})
	logger := funchosttest.TestLogger(t)
	eng, reg := protocoltest.Talker(t, release, engine.Options{Logger: logger}, "Hel")
	srv, err := a2aserver.New(a2aserver.Options{Runs: eng, Registry: reg, Logger: logger, MaxWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	app := funchost.NewFunctionApp()
	if err := srv.Register(app); err != nil {
		t.Fatal(err)
	}
	tr := funchosttest.Transports(t, app)[0] // the emulated host buffers the stream: the node would wait for ever
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, tr.BaseURL+"/api/a2a/talker", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"live-1","role":"ROLE_USER","parts":[{"data":{}}]}}}`))
	req.Header.Set("x-functions-key", tr.FunctionKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var events []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	released := false
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		events = append(events, line)
		if strings.Contains(line, `"artifactUpdate"`) && strings.Contains(line, `"content":"Hel"`) && !released {
			if !strings.Contains(line, `"name":"messages"`) || !strings.Contains(line, `"artifactId":"live-`) {
				t.Fatalf("live chunk event: %s", line)
			}
			released = true
			close(release) // seen while the step runs: let it finish
		}
	}
	if !released {
		close(release)
		t.Fatalf("no live chunk in the stream: %q", events)
	}
	if last := events[len(events)-1]; !strings.Contains(last, a2aserver.StateCompleted) {
		t.Fatalf("stream ended with %s, want the completed task", last)
	}
}
