package platform_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// sseFrame is one frame of an event stream.
type sseFrame struct{ event, data string }

// frameReader reads an event stream frame by frame.
type frameReader struct{ rd *bufio.Reader }

// next returns the next frame; io.EOF at the end of the body.
func (r frameReader) next() (sseFrame, error) {
	var f sseFrame
	for {
		line, err := r.rd.ReadString('\n')
		if err != nil {
			return f, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && f.event != "":
			return f, nil
		case strings.HasPrefix(line, "event: "):
			f.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			f.data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// until reads frames until one satisfies ok, and returns those read.
func (r frameReader) until(t *testing.T, what string, ok func(sseFrame) bool) []sseFrame {
	t.Helper()
	var got []sseFrame
	for {
		f, err := r.next()
		if err != nil {
			t.Fatalf("stream ended before %s: %v; got %v", what, err, got)
		}
		got = append(got, f)
		if ok(f) {
			return got
		}
	}
}

// rest reads the frames left.
func (r frameReader) rest() []sseFrame {
	var got []sseFrame
	for {
		f, err := r.next()
		if err != nil {
			return got
		}
		got = append(got, f)
	}
}

// open sends a request and returns the answer's frames; the body closes with the test.
func open(t *testing.T, tr funchosttest.Transport, method, path, body string) frameReader {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, tr.BaseURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-functions-key", tr.FunctionKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return frameReader{bufio.NewReader(res.Body)}
}

// call sends a JSON request and decodes the answer into out.
func call(t *testing.T, tr funchosttest.Transport, method, path, body string, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, tr.BaseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-functions-key", tr.FunctionKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || json.Unmarshal(b, out) != nil {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
}

func newLiveThread(t *testing.T, tr funchosttest.Transport) string {
	t.Helper()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	call(t, tr, "POST", "/api/threads", `{}`, &th)
	return th.ThreadID
}

// messagePiece returns the content of a messages frame, its message's id and its metadata.
func messagePiece(t *testing.T, f sseFrame) (content, id string, meta map[string]any) {
	t.Helper()
	var pair []json.RawMessage
	var msg struct{ Type, Content, ID string }
	if json.Unmarshal([]byte(f.data), &pair) != nil || len(pair) != 2 || json.Unmarshal(pair[0], &msg) != nil ||
		json.Unmarshal(pair[1], &meta) != nil || msg.Type != "AIMessageChunk" || msg.ID == "" {
		t.Fatalf("messages frame %q: want [AIMessageChunk with an id, metadata]", f.data)
	}
	return msg.Content, msg.ID, meta
}

// release closes gate name after 10 s should the test not have done so: a stream that sends
// nothing before the run ends still ends, and fails the test (releaseNow reports it).
func release(g *gates, name string) (releaseNow func() bool) {
	var once sync.Once
	open := func() { once.Do(func() { close(g.get(name)) }) }
	timer := time.AfterFunc(10*time.Second, open)
	return func() bool {
		stopped := timer.Stop()
		open()
		return stopped
	}
}

func isEvent(name, contains string) func(sseFrame) bool {
	return func(f sseFrame) bool { return f.event == name && strings.Contains(f.data, contains) }
}

// streamFrames runs a durable assistant's runs.stream on thread tid with body, its node let go
// at once, and returns the frames.
func streamFrames(t *testing.T, tr funchosttest.Transport, tid, body string) []sseFrame {
	t.Helper()
	return open(t, tr, "POST", "/api/threads/"+tid+"/runs/stream", body).rest()
}

// pieces returns the message pieces of frames, the number of messages they belong to, and the
// custom frames' data.
func pieces(t *testing.T, frames []sseFrame) (text string, messages int, custom []string) {
	t.Helper()
	var ps []string
	ids := map[string]bool{}
	for _, f := range frames {
		switch f.event {
		case "messages":
			content, id, _ := messagePiece(t, f)
			ps, ids[id] = append(ps, content), true
		case "custom":
			custom = append(custom, f.data)
		}
	}
	return strings.Join(ps, "|"), len(ids), custom
}
