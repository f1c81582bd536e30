//go:build integration

package launch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// chatHosts stages the streaming app twice for one storage prefix on Azurite, as two
// instances of one app, and runs each folder under its own emulated host: the writer, whose
// queue trigger runs the run's steps, and the reader, whose queue trigger is disabled
// (AzureWebJobs.fg_orchestrator.Disabled, as an app setting turns a function off), so that
// every step runs on the writer and the reader knows the run only through storage. It starts
// a run of "chat" on the writer.
func chatHosts(t *testing.T, stageArgs ...string) (writer, reader *streamHost) {
	t.Helper()
	conn := azuritetest.ConnectionString(t)
	prefix := azuritetest.UniqueName("live")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gates := filepath.Join(t.TempDir(), "gates")
	if err := os.Mkdir(gates, 0o755); err != nil {
		t.Fatal(err)
	}
	hosts := make([]*streamHost, 2)
	for i, name := range []string{"writer", "reader"} {
		local := filepath.Join(t.TempDir(), name)
		args := append([]string{"stage", "--out", local, "--exe", "streamapp", "--binary", self}, stageArgs...)
		if err := launch.Run(t.Context(), streamApp, launch.Options{Args: args, Getenv: envOf(map[string]string{launch.EnvStoragePrefix: prefix}), Logger: discard(), Program: "streamapp"}); err != nil {
			t.Fatal(err)
		}
		// The host and the handler read the same functionTimeout: the step's lease ends with
		// it, and a proxied stream ends cleanly before it.
		editJSON(t, filepath.Join(local, "host.json"), func(doc map[string]any) { doc["functionTimeout"] = "00:00:10" })
		env := map[string]string{streamAppEnv: "1", streamGatesEnv: gates, "AzureWebJobsStorage": conn}
		if name == "reader" {
			env["AzureWebJobs.fg_orchestrator.Disabled"] = "true"
		}
		e, err := funchosttest.Start(t.Context(), funchosttest.Options{
			AppRoot: local, Env: env,
			Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}},
			Logf: func(format string, args ...any) { t.Logf(name+": "+format, args...) },
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		if errs := e.FunctionErrors(); len(errs) > 0 {
			t.Fatalf("%s: functions failed to index: %v", name, errs)
		}
		hosts[i] = &streamHost{t: t, e: e, gates: gates, id: "chat-1"}
	}
	writer, reader = hosts[0], hosts[1]
	if status, body := call(t, "POST", writer.e.URL()+"/api/graphs/chat/runs", "k", `{"instance_id":"chat-1","input":{}}`); status != http.StatusAccepted {
		t.Fatalf("start = %d %s", status, body)
	}
	return writer, reader
}

// chatRecords follows the live records of a feed's frames: each chunk's token, and each other
// record as "<kind>:a<attempt of its writer>".
type chatRecords struct {
	t       *testing.T
	records []string
	chunks  int
	events  []string
	attempt map[string]int // writer → attempt
}

func (c *chatRecords) add(f sseFrame) {
	c.t.Helper()
	c.events = append(c.events, f.event)
	if f.event != "live" {
		return
	}
	var rec struct {
		Kind    string          `json:"kind"`
		Writer  string          `json:"writer"`
		Attempt int             `json:"attempt"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(f.data), &rec); err != nil {
		c.t.Fatalf("live frame %s: %v", f.data, err)
	}
	if rec.Kind == "chunk" {
		var tok string
		_ = json.Unmarshal(rec.Data, &tok)
		c.records = append(c.records, tok)
		c.attempt[rec.Writer] = rec.Attempt
		c.chunks++
		return
	}
	c.records = append(c.records, fmt.Sprintf("%s:a%d", rec.Kind, c.attempt[rec.Writer]))
}

func (c *chatRecords) ended() bool { return len(c.events) > 0 && c.events[len(c.events)-1] == "end" }

// check wants the failed attempt's tokens, their retraction, every token of the retry and
// its commit, each once and in order.
func (c *chatRecords) check() {
	c.t.Helper()
	var want []string
	for i := range chatFailAt {
		want = append(want, fmt.Sprintf("a1-t%d", i))
	}
	want = append(want, "retract:a1")
	for i := range chatTokens {
		want = append(want, fmt.Sprintf("a2-t%d", i))
	}
	got := strings.Join(c.records, " ")
	// The commit record follows the step's commit into the channel; a stream that ends with the
	// run may have sent the run's rows first (which supersede the chunks as the record does).
	if got == strings.Join(want, " ") && slices.Contains(c.events, "run_completed") {
		return
	}
	want = append(want, "commit:a2")
	if got != strings.Join(want, " ") {
		c.t.Fatalf("live records on the reader:\n%s\nwant\n%s", got, strings.Join(want, " "))
	}
}

// beforeGate is how many chunks a reader has seen when the retry waits at its gate: the
// failed attempt's and the retry's first chatGateAt.
const beforeGate = chatFailAt + chatGateAt

// Through the staged folder under the emulated host with proxying, two instances on Azurite:
// a node streaming 200 tokens over 2 s on the writer, its first attempt failing after 20; a
// client of the feed's event stream on the reader sees, in its first response and before the
// step commits, the failed attempt's chunks, their retract record and the retry's tokens; it
// leaves mid-way, resumes with Last-Event-ID and gets the rest, each once and in order, then
// the commit record; no handler restarts.
func TestIntegrationStage_ProxiedFeed_TwoInstances_TokensBeforeTheCommit(t *testing.T) {
	writer, reader := chatHosts(t)
	if !reader.e.Config().Proxying {
		t.Fatal("the staged host.json does not proxy")
	}
	c := &chatRecords{t: t, attempt: map[string]int{}}
	s1 := reader.stream("")
	for c.chunks < beforeGate {
		f, err := s1.next()
		if err != nil {
			t.Fatalf("the first response ended after %d chunks, want %d in it (streamed, not a long poll): %v", c.chunks, beforeGate, err)
		}
		c.add(f)
	}
	if st := reader.status(); st == "Completed" || strings.Contains(strings.Join(c.events, " "), "node_completed") {
		t.Fatalf("run %s (events %v) while its retry waits at its gate", st, c.events)
	}
	s1.close() // the client leaves
	openChatGate(t, writer)
	c.resume(reader, s1.lastID)
	c.check()
	if st := reader.status(); st != "Completed" {
		t.Errorf("run %s, want Completed", st)
	}
	if writer.e.Restarts()+reader.e.Restarts() != 0 {
		t.Errorf("handler restarts: writer %d, reader %d; want none", writer.e.Restarts(), reader.e.Restarts())
	}
}

// Staged without proxying, the same two instances: each response of the reader's feed is a
// long poll that ends by itself; reconnecting with Last-Event-ID it gets the same records,
// the retry's first tokens before the step commits.
func TestIntegrationStage_UnproxiedFeed_TwoInstances_LongPollDeliversTokens(t *testing.T) {
	writer, reader := chatHosts(t, "--proxying=false")
	if reader.e.Config().Proxying {
		t.Fatal("--proxying=false staged a proxying host.json")
	}
	c := &chatRecords{t: t, attempt: map[string]int{}}
	lastID, polls := "", 0
	for ; c.chunks < beforeGate; polls++ {
		if polls > 100 {
			t.Fatalf("%d chunks after %d polls", c.chunks, polls)
		}
		lastID = c.poll(reader, lastID)
	}
	if st := reader.status(); st == "Completed" || strings.Contains(strings.Join(c.events, " "), "node_completed") {
		t.Fatalf("run %s (events %v) while its retry waits at its gate", st, c.events)
	}
	openChatGate(t, writer)
	polls += c.resume(reader, lastID)
	c.check()
	if polls < 2 {
		t.Errorf("%d responses: want a long poll (several)", polls)
	}
}

// poll reads one response of the feed after lastID to its end and returns the id of its last
// frame.
func (c *chatRecords) poll(h *streamHost, lastID string) string {
	c.t.Helper()
	s := h.stream(lastID)
	defer s.close()
	for {
		f, err := s.next()
		if errors.Is(err, io.EOF) {
			return s.lastID
		}
		if err != nil {
			c.t.Fatalf("a response broke off instead of ending cleanly: %v", err)
		}
		c.add(f)
	}
}

// resume reads the feed after lastID, reconnecting as a client does after each clean end,
// until the end event; it returns the responses it took.
func (c *chatRecords) resume(h *streamHost, lastID string) int {
	c.t.Helper()
	n := 0
	for ; !c.ended(); n++ {
		if n > 100 {
			c.t.Fatalf("no end after %d responses: %v", n, c.records)
		}
		lastID = c.poll(h, lastID)
	}
	return n
}

// openChatGate lets the retry go on past its gate.
func openChatGate(t *testing.T, h *streamHost) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.gates, "chat-gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
