package platform

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// startRun creates a background run and returns its path, /api/threads/<tid>/runs/<rid>.
func startRun(t *testing.T, tr funchosttest.Transport, tid, body string) (string, string) {
	t.Helper()
	r := do(t, tr, "POST", "/api/threads/"+tid+"/runs", body)
	var run runBody
	if err := json.Unmarshal([]byte(r.body), &run); r.status != 200 || err != nil {
		t.Fatalf("create run: %d %s", r.status, r.body)
	}
	return "/api/threads/" + tid + "/runs/" + run.RunID, run.RunID
}

// said is the wire text of a chatter's frames: values after the messages so far, then the
// message's pair.
func said(id int, msgs ...string) string {
	var b strings.Builder
	for i, m := range msgs {
		quoted := make([]string, i+1)
		for j := range quoted {
			quoted[j] = `"` + msgs[j] + `"`
		}
		fmt.Fprintf(&b, "id: %d\nevent: values\ndata: {\"said\": [%s]}\n\n", id, strings.Join(quoted, ", "))
		fmt.Fprintf(&b, "id: %d\nevent: messages\ndata: [{\"role\": \"assistant\", \"content\": \"%s\"}, {\"langgraph_node\": \"chat\"}]\n\n", id+1, m)
		id += 2
	}
	return b.String()
}

func metadataFrame(rid string) string {
	return "id: 1\nevent: metadata\ndata: {\"run_id\": \"" + rid + "\"}\n\n"
}

// A background run's stream is kept: joined after the run, from the start, after a
// Last-Event-ID, in some of its modes; each event with its id.
func TestJoinStream_AfterTheRun_BothTransports(t *testing.T) {
	f, _ := joinFixture(t, host.Options{})
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			path, rid := startRun(t, tr, tid, `{"assistant_id":"talk","input":{"say":["a","b"]},"stream_mode":["values","messages-tuple"]}`)
			if r := do(t, tr, "GET", path+"/join", ""); r.status != 200 || r.body != `{"said": ["a", "b"]}` {
				t.Fatalf("join: %d %s; want the last values event as the thread's values", r.status, r.body)
			}
			all := metadataFrame(rid) + said(2, "a", "b") + endFrame
			r := do(t, tr, "GET", path+"/stream", "")
			if r.status != 200 || r.body != all {
				t.Fatalf("join stream: %d %q\nwant %q", r.status, r.body, all)
			}
			if h := r.header; h.Get("Content-Type") != "text/event-stream; charset=utf-8" || h.Get("Content-Location") != path ||
				h.Get("Location") != "/threads/"+tid+"/runs/"+rid+"/stream" {
				t.Errorf("headers: %v", h)
			}
			pairs := strings.SplitAfter(said(2, "a", "b"), "\n\n")
			for _, tc := range []struct {
				name, query, lastID, want string
			}{
				{"from the start (-1)", "", "-1", all},
				{"after id 3", "", "3", strings.Join(pairs[2:], "") + endFrame},
				{"after the last id", "", "5", endFrame},
				{"after an id past the end", "", "99", endFrame},
				{"messages only", "?stream_mode=messages-tuple", "", metadataFrame(rid) + pairs[1] + pairs[3] + endFrame},
				{"messages by its other name, after 1", "?stream_mode=messages&cancel_on_disconnect=0", "1", pairs[1] + pairs[3] + endFrame},
				{"values and messages", "?stream_mode=values&stream_mode=messages-tuple", "", all},
				{"a mode the run has not", "?stream_mode=updates", "", metadataFrame(rid) + endFrame},
			} {
				r := doHeaders(t, tr, "GET", path+"/stream"+tc.query, "", "x-functions-key", tr.FunctionKey, "Last-Event-ID", tc.lastID)
				if r.status != 200 || r.body != tc.want {
					t.Errorf("%s: %d %q\nwant %q", tc.name, r.status, r.body, tc.want)
				}
			}
			for _, tc := range []struct {
				name, path, lastID string
				status             int
				want               string
			}{
				{"bad Last-Event-ID", path + "/stream", "x", 422, detail("Validation error: Last-Event-ID: Input should be an event id of this stream (a non-negative integer) or -1")},
				{"negative Last-Event-ID", path + "/stream", "-2", 422, detail("Validation error: Last-Event-ID: Input should be an event id of this stream (a non-negative integer) or -1")},
				{"bad cancel_on_disconnect", path + "/stream?cancel_on_disconnect=maybe", "", 422, detail("Validation error: cancel_on_disconnect: Input should be a valid boolean")},
				{"empty stream_mode", path + "/stream?stream_mode=", "", 422, detail("Validation error: stream_mode: Input should be a non-empty string")},
				{"unknown run", "/api/threads/" + tid + "/runs/nope/stream", "", 404, detail("Run 'nope' not found")},
				{"another thread's run", "/api/threads/" + newThread(t, tr, "") + "/runs/" + rid + "/stream", "", 404, detail("Run '" + rid + "' not found")},
			} {
				r := doHeaders(t, tr, "GET", tc.path, "", "x-functions-key", tr.FunctionKey, "Last-Event-ID", tc.lastID)
				if r.status != tc.status || r.body != tc.want {
					t.Errorf("%s: %d %s; want %d %s", tc.name, r.status, r.body, tc.status, tc.want)
				}
			}

			// A graph without ModeStreamer: its output is the one values event; a failed run
			// ends with the failure frame.
			tid = newThread(t, tr, "")
			path, rid = startRun(t, tr, tid, `{"assistant_id":"chat","input":{"n":1}}`)
			do(t, tr, "GET", path+"/join", "")
			want := metadataFrame(rid) + "id: 2\nevent: values\ndata: {\"context\": null, \"echo\": {\"n\": 1}, \"thread\": \"" + tid + "\"}\n\n" + endFrame
			if r := do(t, tr, "GET", path+"/stream", ""); r.body != want {
				t.Errorf("chat's stream: %q\nwant %q", r.body, want)
			}
			tid = newThread(t, tr, "")
			path, rid = startRun(t, tr, tid, `{"assistant_id":"talk","input":{"say":["a","fail"]},"stream_mode":["values","messages-tuple"]}`)
			do(t, tr, "GET", path+"/join", "")
			want = metadataFrame(rid) + said(2, "a") + "event: error\ndata: {\"error\": \"stream processing failed\"}\n\n" + endFrame
			if r := do(t, tr, "GET", path+"/stream", ""); r.body != want {
				t.Errorf("failed run's stream: %q\nwant %q", r.body, want)
			}
		})
	}
}

// readUntil reads SSE lines until the text read contains want, failing when the body ends first.
func readUntil(t *testing.T, rd *bufio.Reader, got *string, want string) {
	t.Helper()
	for !strings.Contains(*got, want) {
		line, err := rd.ReadString('\n')
		*got += line
		if err != nil {
			t.Fatalf("the stream ended before %q: %v (got %q)", want, err, *got)
		}
	}
}

func readAll(rd *bufio.Reader, got *string) {
	for {
		line, err := rd.ReadString('\n')
		*got += line
		if err != nil {
			return
		}
	}
}

// openJoin opens GET <path>/stream and returns its body's reader.
func openJoin(t *testing.T, ctx context.Context, tr funchosttest.Transport, path string) *bufio.Reader {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", tr.BaseURL+path, nil)
	req.Header.Set("x-functions-key", tr.FunctionKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	if res.StatusCode != 200 {
		t.Fatalf("join %s: %d", path, res.StatusCode)
	}
	return bufio.NewReader(res.Body)
}

// A client joining a running run gets its frames so far, then live ones (in serve mode, before
// the run ends), then the end; under the Functions host the same body at the end of the run.
func TestJoinStream_Live_BothTransports(t *testing.T) {
	f, c := joinFixture(t, host.Options{})
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			path, rid := startRun(t, tr, tid, `{"assistant_id":"talk","input":{"say":["a","hold:`+tr.Name+`","c"]},"stream_mode":["values","messages-tuple"]}`)
			want := metadataFrame(rid) + said(2, "a", "hold:"+tr.Name, "c") + endFrame
			if tr.Name != "standalone" {
				close(c.gate(tr.Name))
				if r := do(t, tr, "GET", path+"/stream", ""); r.body != want {
					t.Fatalf("buffered join: %q\nwant %q", r.body, want)
				}
				return
			}
			rd := openJoin(t, t.Context(), tr, path+"/stream")
			got := ""
			readUntil(t, rd, &got, `"content": "a"`)
			close(c.gate(tr.Name))
			readAll(rd, &got)
			if got != want {
				t.Fatalf("live join: %q\nwant %q", got, want)
			}
		})
	}
}

// Past the wait bound a join answers what is there, without the end frame; joined again after
// the last id it saw, the client gets the rest and the end.
func TestJoinStream_WaitBound_BothTransports(t *testing.T) {
	f, c := joinFixture(t, host.Options{MaxWait: 300 * time.Millisecond})
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			path, rid := startRun(t, tr, tid, `{"assistant_id":"talk","input":{"say":["a","hold:`+tr.Name+`","c"]},"stream_mode":["values","messages-tuple"]}`)
			want := metadataFrame(rid) + said(2, "a", "hold:"+tr.Name, "c") + endFrame
			first := do(t, tr, "GET", path+"/stream", "")
			if first.status != 200 || strings.Contains(first.body, "event: end") || !strings.HasPrefix(want, first.body) {
				t.Fatalf("join past the bound: %d %q; want a prefix of %q without the end", first.status, first.body, want)
			}
			// A run cancelled before it ran has no stream: its join ends at once.
			queued, _ := startRun(t, tr, tid, `{"assistant_id":"talk","multitask_strategy":"enqueue"}`)
			if r := do(t, tr, "POST", queued+"/cancel", ""); r.status != 204 {
				t.Fatalf("cancel the queued run: %d %s", r.status, r.body)
			}
			if r := do(t, tr, "GET", queued+"/stream", ""); r.status != 200 || r.body != endFrame {
				t.Fatalf("join of a run cancelled before it ran: %d %q", r.status, r.body)
			}
			close(c.gate(tr.Name))
			last := ""
			if i := strings.LastIndex(first.body, "id: "); i >= 0 {
				last, _, _ = strings.Cut(first.body[i+4:], "\n")
			}
			rest := ""
			for !strings.HasSuffix(first.body+rest, endFrame) {
				r := doHeaders(t, tr, "GET", path+"/stream", "", "x-functions-key", tr.FunctionKey, "Last-Event-ID", last)
				rest += r.body
				if i := strings.LastIndex(first.body+rest, "id: "); i >= 0 {
					last, _, _ = strings.Cut((first.body + rest)[i+4:], "\n")
				}
			}
			if first.body+rest != want {
				t.Fatalf("joined again after %q: %q\nwant %q", last, first.body+rest, want)
			}
		})
	}
}

// A join on an instance where the run does not execute reads the stored chunks while the run
// goes on elsewhere, then its end.
func TestJoinStream_FromAnotherInstance_BothTransports(t *testing.T) {
	store := threads.NewMemory()
	c := &chatter{}
	var shared *LocalRuns
	mount := func(backend func(RunExecutor) (RunBackend, error)) []funchosttest.Transport {
		app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Register(c, "talk", host.RegisterOptions{}); err != nil {
			t.Fatal(err)
		}
		svc, err := Mount(app, Options{Threads: store, NewRunBackend: backend})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = svc.Close() })
		return funchosttest.Transports(t, app.FunctionApp())
	}
	runner := mount(func(exec RunExecutor) (RunBackend, error) {
		shared = NewLocalRuns(exec, LocalRunsOptions{})
		return shared, nil
	})[0]
	others := mount(func(RunExecutor) (RunBackend, error) { return shared, nil })
	for _, tr := range others {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, runner, "")
			path, rid := startRun(t, runner, tid, `{"assistant_id":"talk","input":{"say":["a","hold:`+tr.Name+`","c"]},"stream_mode":["values","messages-tuple"]}`)
			want := metadataFrame(rid) + said(2, "a", "hold:"+tr.Name, "c") + endFrame
			if tr.Name != "standalone" {
				close(c.gate(tr.Name))
				if r := do(t, tr, "GET", path+"/stream", ""); r.body != want {
					t.Fatalf("buffered join elsewhere: %q\nwant %q", r.body, want)
				}
				return
			}
			rd := openJoin(t, t.Context(), tr, path+"/stream")
			got := ""
			readUntil(t, rd, &got, `"content": "a"`)
			close(c.gate(tr.Name))
			readAll(rd, &got)
			if got != want {
				t.Fatalf("join elsewhere: %q\nwant %q", got, want)
			}
		})
	}
}

// With cancel_on_disconnect=1, a client that leaves before the end cancels the run.
func TestJoinStream_CancelOnDisconnect_Standalone(t *testing.T) {
	f, _ := joinFixture(t, host.Options{})
	tr := f.trs[0]
	if tr.Name != "standalone" {
		t.Fatalf("transport %s, want standalone first", tr.Name)
	}
	tid := newThread(t, tr, "")
	path, _ := startRun(t, tr, tid, `{"assistant_id":"talk","input":{"say":["a","hold:never"]},"stream_mode":"messages-tuple"}`)
	ctx, cancel := context.WithCancel(t.Context())
	rd := openJoin(t, ctx, tr, path+"/stream?cancel_on_disconnect=1")
	got := ""
	readUntil(t, rd, &got, `"content": "a"`)
	cancel()
	r := do(t, tr, "GET", path+"/join", "")
	if r.status != 200 {
		t.Fatalf("join: %d %s", r.status, r.body)
	}
	if r := do(t, tr, "GET", path, ""); !strings.Contains(r.body, `"status": "interrupted"`) {
		t.Fatalf("the run after its client left: %s; want interrupted", r.body)
	}
}

// The kept stream of a run is bounded like a runs/stream answer: past MaxStreamResponseBytes
// the overflow frame, then the end; the run itself goes on and succeeds.
func TestJoinStream_Overflow_BothTransports(t *testing.T) {
	f, _ := joinFixture(t, host.Options{MaxStreamResponseBytes: 400})
	for _, tr := range f.trs {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newThread(t, tr, "")
			path, rid := startRun(t, tr, tid, `{"assistant_id":"talk","input":{"say":["a","b","c","d"]},"stream_mode":["values","messages-tuple"]}`)
			if r := do(t, tr, "GET", path+"/join", ""); r.body != `{"said": ["a", "b", "c", "d"]}` {
				t.Fatalf("join: %s", r.body)
			}
			overflow := "event: error\ndata: {\"error\": \"stream response exceeded max buffered size (400 bytes)\"}\n\n"
			want := metadataFrame(rid) + said(2, "a", "b") + overflow + endFrame
			if r := do(t, tr, "GET", path+"/stream", ""); r.body != want {
				t.Fatalf("overflowed stream: %q\nwant %q", r.body, want)
			}
			if r := doHeaders(t, tr, "GET", path+"/stream", "", "x-functions-key", tr.FunctionKey, "Last-Event-ID", "5"); r.body != overflow+endFrame {
				t.Errorf("after the last id before the overflow: %q", r.body)
			}
			if r := do(t, tr, "GET", path, ""); !strings.Contains(r.body, `"status": "success"`) {
				t.Errorf("run: %s", r.body)
			}
		})
	}
}
