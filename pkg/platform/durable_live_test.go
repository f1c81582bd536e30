package platform_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// liveState is the state of the durable test graphs of the live stream tests.
type liveState struct {
	// Gate names the gate the reply node (or the "slow" branch) waits on after its first
	// pieces; "" waits on none.
	Gate string `json:"gate"`
	// FailFirst makes the reply node's first attempt fail after it wrote and emitted.
	FailFirst bool `json:"fail_first"`
	// Ask makes the first reply wait for the event "followup", which runs reply again.
	Ask      bool     `json:"ask"`
	Replies  int      `json:"replies"`
	Items    []string `json:"items"`
	Answer   string   `json:"answer"`
	Searched []string `json:"searched"`
}

// gates are the tests' gates by name: a node waits until its gate is closed.
type gates struct {
	mu sync.Mutex
	m  map[string]chan struct{} // guarded by mu
}

func (g *gates) get(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]chan struct{}{}
	}
	if g.m[name] == nil {
		g.m[name] = make(chan struct{})
	}
	return g.m[name]
}

// hold waits on gate name ("" none) or ctx.
func (g *gates) hold(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	select {
	case <-g.get(name):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// liveGraphs builds "live_reply" (think, then reply: two message pieces, a custom chunk and an
// emitted event, the gate, a third piece) and "live_fanout" (one branch per item, each emitting
// "searched"; the "slow" branch waits on the gate first).
func liveGraphs(t *testing.T, g *gates) []durable.Graph {
	t.Helper()
	reply := durable.NewManifestBuilder[liveState]("live_reply")
	reply.SetEntrypoint("think")
	err := errors.Join(
		reply.AddStep("think", func(_ context.Context, s liveState) (liveState, error) { s.Answer = ""; return s, nil }, durable.WithNext("reply")),
		reply.AddStep("reply", func(ctx context.Context, s liveState) (liveState, error) {
			info, _ := durable.StepInfoFrom(ctx)
			if err := errors.Join(durable.WriteMessageChunk(ctx, fmt.Sprintf("Hel%d", info.Attempt)), durable.WriteMessageChunk(ctx, "lo"),
				durable.Write(ctx, "progress", map[string]int{"done": 2}), durable.Emit(ctx, "noted", map[string]int{"attempt": info.Attempt})); err != nil {
				return s, err
			}
			if s.FailFirst && info.Attempt == 1 {
				return s, errors.New("model busy")
			}
			if err := g.hold(ctx, s.Gate); err != nil {
				return s, err
			}
			if err := durable.WriteMessageChunk(ctx, "!"); err != nil {
				return s, err
			}
			s.Answer, s.Replies = "Hello!", s.Replies+1
			return s, nil
		}, durable.WithDecide(func(_ context.Context, s liveState) (durable.RouteDecision, error) {
			if s.Ask && s.Replies == 1 {
				return durable.WaitForEvent("followup", "reply"), nil
			}
			return durable.Complete(""), nil
		}), durable.WithRetry(durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond})),
		reply.AddEventHandler("followup", func(_ context.Context, s liveState, _ json.RawMessage) (any, error) { return nil, nil }),
	)
	fan := durable.NewManifestBuilder[liveState]("live_fanout")
	fan.SetEntrypoint("plan")
	err = errors.Join(err,
		fan.AddStep("plan", func(_ context.Context, s liveState) (liveState, error) { return s, nil },
			durable.WithDecide(func(_ context.Context, s liveState) (durable.RouteDecision, error) {
				return durable.Map("done", "search", s.Items), nil
			})),
		fan.AddStep("search", func(ctx context.Context, s liveState) (liveState, error) {
			item, err := durable.BranchItem[string](ctx)
			if err != nil {
				return s, err
			}
			if item == "slow" {
				if err := g.hold(ctx, s.Gate); err != nil {
					return s, err
				}
			}
			s.Searched = append(s.Searched, item)
			return s, durable.Emit(ctx, "searched", map[string]string{"item": item})
		}),
		fan.Reduce("searched", durable.Append),
		fan.AddStep("done", func(_ context.Context, s liveState) (liveState, error) { return s, nil }, durable.Terminal()),
	)
	if err != nil {
		t.Fatal(err)
	}
	var out []durable.Graph
	for _, b := range []*durable.ManifestBuilder[liveState]{reply, fan} {
		built, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, built)
	}
	return out
}

// liveApp serves the live graphs as durable assistants, with background runs, on an engine
// with a live channel in memory, through both transports.
func liveApp(t *testing.T, g *gates) []funchosttest.Transport {
	t.Helper()
	reg := durable.NewRegistry()
	for _, gr := range liveGraphs(t, g) {
		if err := reg.Register(gr); err != nil {
			t.Fatal(err)
		}
	}
	backend, err := platformruns.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Live: memory.NewLiveStore(), PollInterval: 10 * time.Millisecond, Logger: funchosttest.TestLogger(t),
		Policies: map[string]engine.GraphPolicy{platformruns.GraphName: platformruns.Policy}})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	app, err := host.New(host.Options{PlatformCompat: true, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := platform.Mount(app, platform.Options{Threads: threads.NewMemory(), Durable: platformruns.NewAssistants(eng, reg.Public()),
		NewRunBackend: backend.Bind(eng)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(); _ = eng.Close() })
	return funchosttest.Transports(t, app.FunctionApp())
}

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

// TestDurableAssistant_Stream_LiveWhileTheStepRuns: a durable assistant's runs.stream in the
// values, updates, messages-tuple and custom modes sends each step's update and state as it
// commits, and the reply node's message pieces and custom chunk while the node is held, before
// the run ends; its emitted event comes once, with the step. Under the Functions host the same
// frames come, in one body.
func TestDurableAssistant_Stream_LiveWhileTheStepRuns(t *testing.T) {
	g := &gates{}
	for _, tr := range liveApp(t, g) {
		t.Run(tr.Name, func(t *testing.T) {
			gate := "stream-" + tr.Name
			tid := newLiveThread(t, tr)
			body := `{"assistant_id":"live_reply","input":{"gate":"` + gate + `"},"stream_mode":["values","updates","messages-tuple","custom"]}`
			var before []sseFrame
			releaseNow := release(g, gate)
			if tr.Name != funchosttest.TransportStandalone {
				releaseNow() // the host sends the body when the run ends
			}
			r := open(t, tr, "POST", "/api/threads/"+tid+"/runs/stream", body)
			if tr.Name == funchosttest.TransportStandalone {
				before = r.until(t, "the custom chunk", isEvent("custom", `"progress"`))
				if !releaseNow() {
					t.Fatalf("the chunks came only once the node was let go: %v", before)
				}
			}
			frames := append(before, r.rest()...)
			var pieces, custom, updates []string
			ids := map[string]bool{}
			for _, f := range frames {
				switch f.event {
				case "messages":
					content, id, meta := messagePiece(t, f)
					pieces, ids[id] = append(pieces, content), true
					if meta["langgraph_node"] != "reply" || meta["langgraph_step"] != float64(2) || meta["thread_id"] != tid || meta["run_attempt"] != float64(1) {
						t.Errorf("metadata %v", meta)
					}
				case "custom":
					custom = append(custom, f.data)
				case "updates":
					var u map[string]json.RawMessage
					_ = json.Unmarshal([]byte(f.data), &u)
					for k := range u {
						updates = append(updates, k)
					}
				}
			}
			if strings.Join(pieces, "|") != "Hel1|lo|!" || len(ids) != 1 {
				t.Errorf("message pieces %q in %d messages; want Hel1|lo|! in one", pieces, len(ids))
			}
			if strings.Join(custom, "|") != `{"name": "progress", "data": {"done": 2}}|{"name": "noted", "data": {"attempt": 1}}` {
				t.Errorf("custom frames %q", custom)
			}
			if strings.Join(updates, "|") != "think|reply" {
				t.Errorf("updates of %q; want think then reply", updates)
			}
			if tail := frames[len(frames)-3:]; tail[0].event != "values" || !strings.Contains(tail[0].data, `"answer": "Hello!"`) ||
				tail[1].event != "updates" || tail[2].event != "end" {
				t.Errorf("the stream ends with %v; want the final values and update, then end", tail)
			}
			if tr.Name == funchosttest.TransportStandalone {
				// Sent before the node was let go: the first step's update and state, and the
				// reply's first pieces.
				kinds := ""
				for _, f := range before {
					kinds += f.event + " "
				}
				if kinds != "metadata values updates messages messages custom " {
					t.Errorf("frames before the node was let go: %q", kinds)
				}
			}
		})
	}
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

// TestDurableAssistant_Stream_RetriedAttempt: the chunks of an attempt that failed stay sent
// (LangGraph has no retraction), its reply a message of its own; the retry's follow; the event
// the failed attempt emitted is never sent, the retry's once.
func TestDurableAssistant_Stream_RetriedAttempt(t *testing.T) {
	g := &gates{}
	for _, tr := range liveApp(t, g) {
		t.Run(tr.Name, func(t *testing.T) {
			frames := streamFrames(t, tr, newLiveThread(t, tr), `{"assistant_id":"live_reply","input":{"fail_first":true},"stream_mode":["messages-tuple","custom"]}`)
			text, messages, custom := pieces(t, frames)
			if text != "Hel1|lo|Hel2|lo|!" || messages != 2 {
				t.Errorf("pieces %q in %d messages; want both attempts', in two", text, messages)
			}
			want := `{"name": "progress", "data": {"done": 2}}|{"name": "progress", "data": {"done": 2}}|{"name": "noted", "data": {"attempt": 2}}`
			if strings.Join(custom, "|") != want {
				t.Errorf("custom frames %q; want %q", custom, want)
			}
		})
	}
}

// TestDurableAssistant_Stream_Resume: a command.resume's stream follows the run from the event
// on: the pieces of the turn before are not sent again.
func TestDurableAssistant_Stream_Resume(t *testing.T) {
	g := &gates{}
	for _, tr := range liveApp(t, g) {
		t.Run(tr.Name, func(t *testing.T) {
			tid := newLiveThread(t, tr)
			first := streamFrames(t, tr, tid, `{"assistant_id":"live_reply","input":{"ask":true},"stream_mode":["messages-tuple","updates"]}`)
			if text, _, _ := pieces(t, first); text != "Hel1|lo|!" || !strings.Contains(first[len(first)-2].data, `"__interrupt__"`) {
				t.Fatalf("first turn: %q, %v", text, first)
			}
			again := streamFrames(t, tr, tid, `{"assistant_id":"live_reply","command":{"resume":{}},"stream_mode":["messages-tuple","updates"]}`)
			if text, messages, _ := pieces(t, again); text != "Hel1|lo|!" || messages != 1 {
				t.Errorf("resumed turn's pieces %q in %d messages; want this turn's only", text, messages)
			}
			if strings.Contains(again[len(again)-2].data, `"__interrupt__"`) || !strings.Contains(again[len(again)-2].data, `"replies": 2`) {
				t.Errorf("resumed turn ends with %v", again[len(again)-2:])
			}
		})
	}
}

// TestDurableAssistant_JoinStream_Live: a background run's joined stream carries the node's
// pieces while the node is held (in serve mode; the host sends the body at the end).
func TestDurableAssistant_JoinStream_Live(t *testing.T) {
	g := &gates{}
	for _, tr := range liveApp(t, g) {
		t.Run(tr.Name, func(t *testing.T) {
			gate := "join-" + tr.Name
			tid := newLiveThread(t, tr)
			releaseNow := release(g, gate)
			if tr.Name != funchosttest.TransportStandalone {
				releaseNow()
			}
			var run struct {
				RunID string `json:"run_id"`
			}
			call(t, tr, "POST", "/api/threads/"+tid+"/runs", `{"assistant_id":"live_reply","input":{"gate":"`+gate+`"},"stream_mode":["messages-tuple","custom"]}`, &run)
			r := open(t, tr, "GET", "/api/threads/"+tid+"/runs/"+run.RunID+"/stream", "")
			var before []sseFrame
			if tr.Name == funchosttest.TransportStandalone {
				before = r.until(t, "the second piece", isEvent("messages", `"lo"`))
				if !releaseNow() {
					t.Fatalf("the joined stream's pieces came only once the node was let go: %v", before)
				}
			}
			frames := append(before, r.rest()...)
			if text, messages, custom := pieces(t, frames); text != "Hel1|lo|!" || messages != 1 || len(custom) != 2 {
				t.Errorf("joined stream: pieces %q in %d messages, custom %q", text, messages, custom)
			}
			if frames[len(frames)-1].event != "end" {
				t.Errorf("joined stream ends with %v", frames[len(frames)-1])
			}
		})
	}
}
