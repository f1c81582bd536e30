package platform_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

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
