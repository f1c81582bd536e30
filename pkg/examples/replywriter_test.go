package examples

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// TestReplyWriter_WritesThePiecesOfItsReply runs reply_writer on an engine with a live
// channel: the run's channel holds the reply's pieces, in order, as message chunks, a progress
// chunk every five pieces and after the last, then the step's commit; the state holds the
// reply whole and history the "composed" event.
func TestReplyWriter_WritesThePiecesOfItsReply(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	if err := reg.Register(MustReplyWriter()); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Live: memory.NewLiveStore(), PollInterval: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if _, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "reply_writer", InstanceID: "w1", Input: json.RawMessage(`{"prompt":"Is Go fast?","pause_ms":1}`)}); err != nil {
		t.Fatal(err)
	}
	run, err := e.WaitRun(t.Context(), "w1", nil)
	if err != nil || run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run: %+v %v", run, err)
	}
	var out struct {
		State ReplyState `json:"state"`
	}
	_ = json.Unmarshal(run.Output, &out)
	const want = `You wrote "Is Go fast?". This reply is written piece by piece, as a model writes its tokens, and committed whole.`
	if out.State.Reply != want {
		t.Fatalf("reply %q", out.State.Reply)
	}
	var pieces, progress []string
	var after, liveAfter int64
	for ended := false; !ended; {
		page, err := e.Feed(t.Context(), "w1", engine.FeedQuery{After: after, Live: true, LiveAfter: liveAfter, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		after, liveAfter = page.NextAfter, page.LiveNext
		for _, r := range page.Live {
			switch {
			case r.Kind == engine.LiveChunk && r.Name == durable.MessagesChunk:
				var m durable.MessageChunk
				if json.Unmarshal(r.Data, &m) != nil || m.Type != "AIMessageChunk" {
					t.Fatalf("message chunk %s", r.Data)
				}
				pieces = append(pieces, m.Content)
			case r.Kind == engine.LiveChunk:
				progress = append(progress, string(r.Data))
			case r.Kind == engine.LiveCommit:
				ended = true
			}
		}
	}
	if strings.Join(pieces, "") != want || len(pieces) != 21 {
		t.Errorf("%d pieces %q", len(pieces), pieces)
	}
	if strings.Join(progress, " ") != `{"of":21,"pieces":5} {"of":21,"pieces":10} {"of":21,"pieces":15} {"of":21,"pieces":20} {"of":21,"pieces":21}` {
		t.Errorf("progress %q", progress)
	}
	hist, err := e.History(t.Context(), "w1", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	composed := 0
	for _, h := range hist.Events {
		if h.Type == engine.HistoryCustom && h.Node == "compose" && string(h.Data) == `{"name":"composed","data":{"pieces":21}}` {
			composed++
		}
	}
	if composed != 1 {
		t.Errorf("%d composed events in %d rows", composed, len(hist.Events))
	}
}

// An input past reply_writer's bounds is refused.
func TestReplyWriter_Validate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    ReplyState
		want string
	}{
		{ReplyState{Prompt: " "}, "prompt must not be blank"},
		{ReplyState{Prompt: strings.Repeat("p", MaxPromptBytes+1)}, "prompt must be at most 4096 bytes, got 4097"},
		{ReplyState{Prompt: "p", PauseMS: MaxPauseMS + 1}, "pause_ms must be 0 to 1000, got 1001"},
		{ReplyState{Prompt: "p", PauseMS: -1}, "pause_ms must be 0 to 1000, got -1"},
		{ReplyState{Prompt: strings.Repeat("p", MaxPromptBytes), PauseMS: MaxPauseMS}, ""},
	} {
		err := tc.s.Validate()
		if got := ""; err != nil && err.Error() != tc.want || err == nil && tc.want != got {
			t.Errorf("Validate(%.20q, %d) = %v; want %q", tc.s.Prompt, tc.s.PauseMS, err, tc.want)
		}
	}
}
