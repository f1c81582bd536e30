package launch_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// streamAppEnv makes the test binary the streaming app (TestMain): the emulated host starts
// the staged folder's executable, a copy of the test binary, with it set.
const streamAppEnv = "LAUNCH_TEST_STREAMAPP"

// streamGatesEnv is the folder the streaming app's node waits in: before its token tokenGates[i]
// it waits for the file gate-<token>.
const streamGatesEnv = "LAUNCH_TEST_STREAMAPP_GATES"

// streamTokens is how many tokens the node writes; tokenGates are the tokens it waits before.
const streamTokens = 10

var tokenGates = []int{3, 6}

type talkState struct {
	Said int `json:"said"`
}

// talk writes tokens t0..t9 to the run's live channel, waiting for each gate file before the
// token it names, and commits {"said": 10}: while it waits, the step is held and uncommitted.
func talk(ctx context.Context, _ talkState) (any, error) {
	for i := range streamTokens {
		for _, g := range tokenGates {
			if g == i {
				if err := waitFile(ctx, filepath.Join(os.Getenv(streamGatesEnv), fmt.Sprintf("gate-%d", i))); err != nil {
					return nil, err
				}
			}
		}
		if err := durable.Write(ctx, "token", fmt.Sprintf("t%d", i)); err != nil {
			return nil, err
		}
	}
	return durable.Update{"said": streamTokens}, nil
}

func waitFile(ctx context.Context, path string) error {
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// The chat graph's node writes chatTokens tokens "a<attempt>-t<i>", one every chatPace (2 s in
// all); its first attempt fails after chatFailAt of them, and its second waits before token
// chatGateAt for the gate file chat-gate.
const (
	chatTokens = 200
	chatFailAt = 20
	chatGateAt = 100
	chatPace   = 10 * time.Millisecond
)

// chatGraph is the one-node graph "chat", its node retried once.
func chatGraph() (durable.Graph, error) {
	b := durable.NewManifestBuilder[talkState]("chat")
	b.SetEntrypoint("chat")
	if err := b.AddNode("chat", chatNode, durable.Terminal(), durable.WithRetry(durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: 10 * time.Millisecond})); err != nil {
		return nil, err
	}
	return b.Build()
}

func chatNode(ctx context.Context, _ talkState) (any, error) {
	info, _ := durable.StepInfoFrom(ctx)
	for i := range chatTokens {
		switch {
		case info.Attempt == 1 && i == chatFailAt:
			return nil, errors.New("model overloaded")
		case info.Attempt > 1 && i == chatGateAt:
			if err := waitFile(ctx, filepath.Join(os.Getenv(streamGatesEnv), "chat-gate")); err != nil {
				return nil, err
			}
		}
		if err := durable.Write(ctx, "token", fmt.Sprintf("a%d-t%d", info.Attempt, i)); err != nil {
			return nil, err
		}
		time.Sleep(chatPace)
	}
	return durable.Update{"said": chatTokens}, nil
}

// streamApp is the staged app: the durable graphs "talk" and "chat" and their runs API, in
// memory unless AzureWebJobsStorage names an account.
func streamApp(_ context.Context, s launch.Settings) (*launch.App, error) {
	h, err := host.New(host.Options{Logger: s.Logger, AuthLevel: funchost.AuthFunction})
	if err != nil {
		return nil, err
	}
	b := durable.NewManifestBuilder[talkState]("talk")
	b.SetEntrypoint("talk")
	if err := b.AddNode("talk", talk, durable.Terminal()); err != nil {
		return nil, err
	}
	g, err := b.Build()
	if err != nil {
		return nil, err
	}
	chat, err := chatGraph()
	if err != nil {
		return nil, err
	}
	reg := durable.NewRegistry()
	for _, g := range []durable.Graph{g, chat} {
		if err := reg.Register(g); err != nil {
			return nil, err
		}
	}
	st := s.Durable.OrMemory()
	eng, err := launch.MountDurable(st, h, reg, launch.DurableOptions{})
	if err != nil {
		return nil, err
	}
	a := &launch.App{FunctionApp: h.FunctionApp(), Close: eng.Close}
	if st.EmbeddedDispatcher {
		a.Start = eng.Start
	}
	return a, nil
}

// streamHost is the staged streaming app under the emulated host.
type streamHost struct {
	t     *testing.T
	e     *funchosttest.Emulator
	gates string
	id    string
}

// startStreamHost stages the streaming app (the test binary) with stageArgs, gives the
// staged host.json a test-sized functionTimeout (the host and the handler read the same
// file), keeps the run in memory (no AzureWebJobsStorage), runs the folder under the emulated
// host and starts a run of "talk".
func startStreamHost(t *testing.T, stageArgs ...string) *streamHost {
	t.Helper()
	dir := t.TempDir()
	local, gates := filepath.Join(dir, "local"), filepath.Join(dir, "gates")
	if err := os.Mkdir(gates, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"stage", "--out", local, "--exe", "streamapp", "--binary", self}, stageArgs...)
	if err := launch.Run(t.Context(), streamApp, launch.Options{Args: args, Getenv: envOf(nil), Logger: discard(), Program: "streamapp"}); err != nil {
		t.Fatal(err)
	}
	editJSON(t, filepath.Join(local, "host.json"), func(doc map[string]any) { doc["functionTimeout"] = "00:00:04" })
	editJSON(t, filepath.Join(local, "local.settings.json"), func(doc map[string]any) { delete(doc["Values"].(map[string]any), "AzureWebJobsStorage") })
	e, err := funchosttest.Start(t.Context(), funchosttest.Options{
		AppRoot: local,
		Env:     map[string]string{streamAppEnv: "1", streamGatesEnv: gates},
		Keys:    funchost.Keys{HostFunction: map[string]string{"default": "k"}},
		Logf:    t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	h := &streamHost{t: t, e: e, gates: gates, id: "talk-1"}
	if status, body := call(t, "POST", e.URL()+"/api/graphs/talk/runs", "k", `{"instance_id":"talk-1","input":{}}`); status != http.StatusAccepted {
		t.Fatalf("start = %d %s", status, body)
	}
	return h
}

func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// open lets the node pass its gate before token i.
func (h *streamHost) open(i int) {
	if err := os.WriteFile(filepath.Join(h.gates, fmt.Sprintf("gate-%d", i)), nil, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// status is the run's runtime_status.
func (h *streamHost) status() string {
	_, body := call(h.t, "GET", h.e.URL()+"/api/runs/"+h.id, "k", "")
	var st struct {
		Status string `json:"runtime_status"`
	}
	_ = json.Unmarshal([]byte(body), &st)
	return st.Status
}

// sseFrame is one frame of an event stream.
type sseFrame struct {
	id, event, data string
	retry           bool
}

// token is the token a live frame carries, "" for any other frame.
func (f sseFrame) token() string {
	var rec struct {
		Name string          `json:"name"`
		Data json.RawMessage `json:"data"`
	}
	if f.event != "live" || json.Unmarshal([]byte(f.data), &rec) != nil || rec.Name != "token" {
		return ""
	}
	var tok string
	_ = json.Unmarshal(rec.Data, &tok)
	return tok
}

// feedStream is one response of the feed's event stream.
type feedStream struct {
	cancel context.CancelFunc
	body   io.ReadCloser
	r      *bufio.Reader
	lastID string // the id of the last frame read
}

// stream opens the feed's event stream after lastID ("" for the start). A stream lives at
// most 30 s: long enough for everything these tests wait for, so a broken stream fails the
// test instead of hanging it.
func (h *streamHost) stream(lastID string) *feedStream {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.t.Context(), 30*time.Second)
	req, _ := http.NewRequestWithContext(ctx, "GET", h.e.URL()+"/api/runs/"+h.id+"/feed", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("x-functions-key", "k")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		h.t.Fatalf("feed = %d", resp.StatusCode)
	}
	return &feedStream{cancel: cancel, body: resp.Body, r: bufio.NewReader(resp.Body), lastID: lastID}
}

// next reads the next frame (comments skipped); io.EOF when the response ended cleanly.
func (s *feedStream) next() (sseFrame, error) {
	var f sseFrame
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && !seen {
				return f, io.EOF
			}
			return f, fmt.Errorf("read the stream: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if seen {
				if f.id != "" {
					s.lastID = f.id
				}
				return f, nil
			}
		case strings.HasPrefix(line, ":"):
		default:
			seen = true
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			switch k {
			case "id":
				f.id = v
			case "event":
				f.event = v
			case "data":
				f.data = v
			case "retry":
				f.retry = true
			}
		}
	}
}

func (s *feedStream) close() {
	s.cancel()
	_ = s.body.Close()
}

// Through the staged folder under the emulated host with proxying (the staged default): the
// feed's event stream delivers the node's tokens in one response while the step is held,
// before it commits; a client that leaves resumes with Last-Event-ID and gets the rest, each
// token once; a stream left open ends cleanly (a retry frame, no end event) before
// functionTimeout, and the host never restarts the handler over it.
func TestStage_ProxiedFeedStreamsTokensWhileTheStepRuns(t *testing.T) {
	h := startStreamHost(t)
	if !h.e.Config().Proxying {
		t.Fatal("the staged host.json does not proxy")
	}
	var tokens []string
	s1 := h.stream("")
	readTokens := func(s *feedStream, upTo int) {
		t.Helper()
		for len(tokens) < upTo {
			f, err := s.next()
			if err != nil {
				t.Fatalf("stream ended after %v, want tokens up to t%d in this response: %v", tokens, upTo-1, err)
			}
			if f.event == "end" {
				t.Fatalf("end before t%d", upTo-1)
			}
			if tok := f.token(); tok != "" {
				tokens = append(tokens, tok)
			}
		}
	}
	readTokens(s1, 3)
	if st := h.status(); st == "Completed" {
		t.Fatalf("run %s while its node waits", st)
	}
	h.open(3)
	readTokens(s1, 6) // the same response: streamed, not a long poll
	s1.close()        // the client leaves

	// Left open while the node waits: the response ends by itself, cleanly, before
	// functionTimeout.
	s2 := h.stream(s1.lastID)
	var last sseFrame
	for {
		f, err := s2.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the held stream broke off instead of ending cleanly: %v", err)
		}
		if f.event == "end" || f.token() != "" {
			t.Fatalf("held stream sent %+v, want nothing new", f)
		}
		last = f
	}
	s2.close()
	if !last.retry || h.e.Restarts() != 0 {
		t.Fatalf("held stream ended with %+v, %d restarts; want a retry frame and none", last, h.e.Restarts())
	}

	h.open(6)
	s3 := h.stream(s1.lastID)
	defer s3.close()
	for {
		f, err := s3.next()
		if err != nil {
			t.Fatalf("resumed stream ended before the end event: %v (tokens %v)", err, tokens)
		}
		if tok := f.token(); tok != "" {
			tokens = append(tokens, tok)
		}
		if f.event == "end" {
			break
		}
	}
	checkTokens(t, tokens)
	if st := h.status(); st != "Completed" {
		t.Errorf("run %s, want Completed", st)
	}
}

// Staged without proxying, the same feed is a long poll: each response ends by itself, and
// a client reconnecting with Last-Event-ID gets every token once, the first ones before the
// step commits.
func TestStage_UnproxiedFeedLongPollsTokens(t *testing.T) {
	h := startStreamHost(t, "--proxying=false")
	if h.e.Config().Proxying {
		t.Fatal("--proxying=false staged a proxying host.json")
	}
	var tokens []string
	lastID, polls, opened := "", 0, false
	for ended := false; !ended; polls++ {
		if polls > 200 {
			t.Fatalf("no end after %d polls (tokens %v)", polls, tokens)
		}
		s := h.stream(lastID)
		for {
			f, err := s.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("poll %d broke off: %v", polls, err)
			}
			if tok := f.token(); tok != "" {
				tokens = append(tokens, tok)
			}
			ended = ended || f.event == "end"
		}
		lastID = s.lastID
		s.close()
		if !opened && len(tokens) >= 3 {
			if st := h.status(); st == "Completed" {
				t.Fatalf("run %s while its node waits", st)
			}
			h.open(3)
			h.open(6)
			opened = true
		}
	}
	checkTokens(t, tokens)
	if polls < 2 {
		t.Errorf("%d responses: want a long poll (several)", polls)
	}
}

// checkTokens wants t0..t9, each once, in order.
func checkTokens(t *testing.T, tokens []string) {
	t.Helper()
	want := make([]string, streamTokens)
	for i := range want {
		want[i] = fmt.Sprintf("t%d", i)
	}
	if strings.Join(tokens, ",") != strings.Join(want, ",") {
		t.Errorf("tokens %v, want %v each once in order", tokens, want)
	}
}

// The staged host.json proxies unless per-user isolation is on (a proxied request carries no
// key level for its master-key admins); --proxying decides either way.
func TestStage_ProxyingFollowsIsolationUnlessTold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		flags []string
		want  bool
	}{
		{"default", nil, nil, true},
		{"isolation on", map[string]string{"FUNCGRAPH_USER_ISOLATION": "on"}, nil, false},
		{"isolation on, told to proxy", map[string]string{"FUNCGRAPH_USER_ISOLATION": "on"}, []string{"--proxying"}, true},
		{"told not to", nil, []string{"--proxying=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "local")
			args := append([]string{"stage", "--out", out, "--binary", self}, tc.flags...)
			if err := launch.Run(t.Context(), streamApp, launch.Options{Args: args, Getenv: envOf(tc.env), Logger: discard(), Program: "streamapp"}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(out, "host.json"))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := funchosttest.ParseHostConfig(data)
			if err != nil || cfg.Proxying != tc.want {
				t.Errorf("staged proxying %v (%v), want %v", cfg.Proxying, err, tc.want)
			}
		})
	}
}
