package platformruns_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// call sends one request with the function key (and headers as name/value pairs) and returns
// the status and body.
func call(t *testing.T, tr funchosttest.Transport, method, path, body string, headers ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, tr.BaseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-functions-key", tr.FunctionKey)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func newPlatformThread(t *testing.T, tr funchosttest.Transport) string {
	t.Helper()
	status, body := call(t, tr, "POST", "/api/threads", "{}")
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal([]byte(body), &th); status != 200 || err != nil {
		t.Fatalf("create thread: %d %s", status, body)
	}
	return th.ThreadID
}

const echoEnd = "event: end\ndata: null\n\n"

// echoPair is the messages frame of one echo_agent message.
func echoPair(id, role, content string) string {
	head := ""
	if id != "" {
		head = "id: " + id + "\n"
	}
	return head + "event: messages\ndata: [{\"role\": \"" + role + "\", \"content\": \"" + content + "\"}, {\"langgraph_node\": \"echo\"}]\n\n"
}

// checkEchoStreams drives echo_agent through tr: a single messages-tuple stream; a background
// run's stream joined after it, from the start and after a Last-Event-ID (and, with eng, its
// chunks purged with its durable run); a join of a run still going on (a second instance's,
// when other is set: the run executes wherever the engine's work lands).
func checkEchoStreams(t *testing.T, tr, other funchosttest.Transport, eng *engine.Engine) {
	tid := newPlatformThread(t, tr)
	status, body := call(t, tr, "POST", "/api/threads/"+tid+"/runs/stream",
		`{"assistant_id":"echo_agent","input":{"messages":[{"role":"user","content":"hi"}]},"stream_mode":"messages-tuple"}`)
	if want := echoPair("", "user", "hi") + echoPair("", "assistant", "hi") + echoEnd; status != 200 || !strings.HasSuffix(body, want) || strings.Count(body, "event: ") != 4 {
		t.Fatalf("one messages-tuple stream: %d %q; want the suffix %q", status, body, want)
	}

	status, body = call(t, tr, "POST", "/api/threads/"+tid+"/runs",
		`{"assistant_id":"echo_agent","input":{"messages":[{"role":"user","content":"bg"}]},"stream_mode":["values","messages-tuple"]}`)
	var run struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(body), &run); status != 200 || err != nil {
		t.Fatalf("create run: %d %s", status, body)
	}
	path := "/api/threads/" + tid + "/runs/" + run.RunID
	if status, body := call(t, tr, "GET", path+"/join", ""); status != 200 || !strings.Contains(body, `"bg"`) {
		t.Fatalf("join: %d %s", status, body)
	}
	values := `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "bg"}, {"role": "assistant", "content": "bg"}]}`
	rest := echoPair("3", "user", "bg") + echoPair("4", "assistant", "bg") + echoEnd
	want := "id: 1\nevent: metadata\ndata: {\"run_id\": \"" + run.RunID + "\"}\n\nid: 2\nevent: values\ndata: " + values + "\n\n" + rest
	for _, j := range []funchosttest.Transport{tr, other} {
		if status, body := call(t, j, "GET", path+"/stream", ""); status != 200 || body != want {
			t.Fatalf("%s: join stream: %d %q\nwant %q", j.Name, status, body, want)
		}
		if status, body := call(t, j, "GET", path+"/stream", "", "Last-Event-ID", "2"); status != 200 || body != rest {
			t.Fatalf("%s: join stream after 2: %d %q\nwant %q", j.Name, status, body, rest)
		}
	}

	// A run joined while it waits in the queue and runs: the same stream, to its end.
	status, body = call(t, tr, "POST", "/api/threads/"+tid+"/runs",
		`{"assistant_id":"echo_agent","input":{"messages":[{"role":"user","content":"late"}]},"stream_mode":"messages-tuple","config":{"configurable":{"delay_ms":300}}}`)
	if err := json.Unmarshal([]byte(body), &run); status != 200 || err != nil {
		t.Fatalf("create run: %d %s", status, body)
	}
	path = "/api/threads/" + tid + "/runs/" + run.RunID
	want = "id: 1\nevent: metadata\ndata: {\"run_id\": \"" + run.RunID + "\"}\n\n" + echoPair("2", "user", "late") + echoPair("3", "assistant", "late") + echoEnd
	if status, body := call(t, other, "GET", path+"/stream", ""); status != 200 || body != want {
		t.Fatalf("%s: join stream of a running run: %d %q\nwant %q", other.Name, status, body, want)
	}
	if eng != nil {
		checkPurged(t, eng, run.RunID)
	}
}

// checkPurged: a background run's stream chunks are payloads of its durable run, deleted by
// PurgeRun.
func checkPurged(t *testing.T, eng *engine.Engine, runID string) {
	t.Helper()
	ctx := t.Context()
	if _, err := eng.WaitRun(ctx, runID, func(r engine.Run) bool { return r.RuntimeStatus.Finished() }); err != nil {
		t.Fatal(err)
	}
	page, err := eng.History(ctx, runID, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	nonce := ""
	for _, ev := range page.Events {
		var row struct {
			State struct {
				Nonce string `json:"nonce"`
			} `json:"state"`
		}
		if ev.Node == "wait_turn" && json.Unmarshal(ev.Data, &row) == nil && row.State.Nonce != "" {
			nonce = row.State.Nonce
			break
		}
	}
	key := runID + "/" + nonce + "/stream/0"
	payloads := eng.Options().Payloads
	if _, err := payloads.Get(ctx, key); nonce == "" || err != nil {
		t.Fatalf("the stream's first chunk %q: %v", key, err)
	}
	if err := eng.PurgeRun(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := payloads.Get(ctx, key); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the stream's first chunk after the purge: %v; want deleted", err)
	}
}

// TestStreams_ExampleApp_InMemory_BothTransports: the example app on its in-memory stores
// (background runs on the engine's in-memory twins).
func TestStreams_ExampleApp_InMemory_BothTransports(t *testing.T) {
	app, err := exampleapp.Build(exampleapp.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	for _, tr := range funchosttest.Transports(t, app.FunctionApp) {
		t.Run(tr.Name, func(t *testing.T) { checkEchoStreams(t, tr, tr, app.Engine) })
	}
}
