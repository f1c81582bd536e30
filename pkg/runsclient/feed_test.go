package runsclient_test

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// stream answers an event stream of body, then ends cleanly.
func stream(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(body))
	}
}

// droppedStream answers an event stream that promises more than body and drops the
// connection after it: the client reads an unexpected end.
func droppedStream(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body)+1000, body)
		_ = buf.Flush()
	}
}

// item is one feed frame of run r.
func item(seq int, typ, data string) string {
	return fmt.Sprintf("id: %d.r\nevent: %s\ndata: {\"seq\": %d, \"type\": %q, \"name\": null, \"node\": \"n\", \"timestamp\": \"2026-01-05T10:00:00Z\", \"data\": %s}\n\n", seq, typ, seq, typ, data)
}

const endFrame = "event: end\ndata: {\"runtime_status\": \"Completed\"}\n\n"

func TestFeed_ReconnectsAfterACleanEndAndADrop_ResumesByCursor(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		stream("retry: 0\n\n" + item(1, "run_started", `{"initial_state": {"a": 1}}`) + item(2, "node_completed", `{"update": {"b": {"set": 2}}}`)),
		droppedStream(": keep-alive\n\n" + item(3, "node_completed", `{"state": {"a": 1, "b": 3}}`) + "id: 4.r\nevent: node_comp"),
		stream("retry: 500\n\nevent: error\ndata: {\"error\": \"too many requests\"}\n\n"),
		stream(item(4, "run_completed", `{"state": {"a": 1, "b": 4}}`) + endFrame),
	}}
	c, waits := fakeClient(t, f, runsclient.Retry{})
	var seqs []int64
	var states []string
	var end runsclient.FeedEvent
	for ev, err := range c.Feed(t.Context(), "run/1", runsclient.FeedOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.End {
			end = ev
			continue
		}
		seqs = append(seqs, ev.Seq)
		states = append(states, string(ev.State))
	}
	if !slices.Equal(seqs, []int64{1, 2, 3, 4}) || !end.End || end.Status != runsclient.StatusCompleted || end.Cursor != "4.r" {
		t.Fatalf("seqs %v, end %+v", seqs, end)
	}
	if want := []string{`{"a": 1}`, `{"a":1,"b":2}`, `{"a": 1, "b": 3}`, `{"a": 1, "b": 4}`}; !slices.Equal(states, want) {
		t.Fatalf("states %q, want %q", states, want)
	}
	var ids []string
	for _, r := range f.requests {
		ids = append(ids, r.Header.Get("Last-Event-ID"))
		if r.Header.Get("Accept") != "text/event-stream" || r.URL.Query().Get("live") != "false" || r.URL.EscapedPath() != "/api/runs/run%2F1/feed" {
			t.Fatalf("feed request %s %s Accept %q", r.Method, r.URL, r.Header.Get("Accept"))
		}
	}
	if !slices.Equal(ids, []string{"", "2.r", "3.r", "3.r"}) {
		t.Fatalf("Last-Event-IDs %q: want each reconnection to resume after the last frame received", ids)
	}
	if len(*waits) != 3 || (*waits)[0] != 0 {
		t.Fatalf("waits %v: want the retry field's 0 after the clean end, then back-offs", *waits)
	}
}

func TestFeed_ResumedFromACursor_StateUnknownUntilAWholeState(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		stream(item(6, "node_completed", `{"update": {"b": {"set": 6}}}`) + item(7, "event_applied", `{"state": {"b": 7}}`) + item(8, "node_completed", `{"update": {"c": {"set": 8}}}`) + endFrame),
	}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	type st struct {
		B int `json:"b"`
		C int `json:"c"`
	}
	var got []*st
	for ev, err := range runsclient.Follow[st](t.Context(), c, "r", runsclient.FeedOptions{Cursor: "5.r"}) {
		if err != nil {
			t.Fatal(err)
		}
		if !ev.End {
			got = append(got, ev.State)
		}
	}
	if len(got) != 3 || got[0] != nil || got[1] == nil || *got[1] != (st{B: 7}) || got[2] == nil || *got[2] != (st{B: 7, C: 8}) {
		t.Fatalf("states %v", got)
	}
	if f.requests[0].Header.Get("Last-Event-ID") != "5.r" {
		t.Fatalf("Last-Event-ID %q", f.requests[0].Header.Get("Last-Event-ID"))
	}
}

func TestFeed_GivesUpAfterTheAttempts_AndStopsOnTerminalAnswers(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){droppedStream(": keep-alive\n\n")}}
	c, _ := fakeClient(t, f, runsclient.Retry{MaxAttempts: 3})
	var err error
	for _, e := range c.Feed(t.Context(), "r", runsclient.FeedOptions{}) {
		err = e
	}
	if err == nil || !strings.Contains(err.Error(), "connection dropped") || f.count() != 3 {
		t.Fatalf("a feed whose every connection drops: %v after %d connections, want an error after 3", err, f.count())
	}

	g := &recorded{answers: []func(http.ResponseWriter, *http.Request){answer(409, `{"error": "the feed position is in another run of this instance id, which was replaced or purged: read the feed again from after=0 without run"}`)}}
	c, _ = fakeClient(t, g, runsclient.Retry{})
	err = nil
	for _, e := range c.Feed(t.Context(), "r", runsclient.FeedOptions{Cursor: "3.old"}) {
		err = e
	}
	if !errors.Is(err, runsclient.ErrConflict) || g.count() != 1 {
		t.Fatalf("a cursor of a replaced run: %v after %d requests", err, g.count())
	}
}

func TestFeed_LiveRecordsMoveTheCursor(t *testing.T) {
	live := "id: 1.r.118\nevent: live\ndata: {\"offset\": 0, \"next\": 118, \"kind\": \"chunk\", \"writer\": \"w\", \"step\": 2, \"attempt\": 1, \"node\": \"answer\", \"branch\": null, \"name\": \"token\", \"data\": \"Hel\"}\n\n"
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){stream(live), stream(endFrame)}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	var recs []runsclient.FeedEvent
	for ev, err := range c.Feed(t.Context(), "r", runsclient.FeedOptions{Live: true}) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, ev)
	}
	if len(recs) != 2 || recs[0].Type != "live" || recs[0].Live == nil || recs[0].Live.Kind != "chunk" || string(recs[0].Data) != `"Hel"` || recs[0].Node != "answer" {
		t.Fatalf("events %+v", recs)
	}
	if f.requests[0].URL.Query().Has("live") || f.requests[1].Header.Get("Last-Event-ID") != "1.r.118" {
		t.Fatalf("requests %v / Last-Event-ID %q", f.requests[0].URL, f.requests[1].Header.Get("Last-Event-ID"))
	}
}

// Frames split across reads and multi-line data are put together as EventSource does.
func TestFeed_FrameParsing(t *testing.T) {
	body := "retry: 10\n: comment\nid: 1.r\nevent: custom\ndata: {\"seq\": 1, \"type\": \"custom\", \"name\": \"x\",\ndata:  \"node\": null, \"timestamp\": \"2026-01-05T10:00:00Z\", \"data\": {\"k\": 1}}\n\n" + endFrame
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 16)
		for i := range body {
			_ = bw.WriteByte(body[i])
		}
		_ = bw.Flush()
	}}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	var evs []runsclient.FeedEvent
	for ev, err := range c.Feed(t.Context(), "r", runsclient.FeedOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	var d struct{ K int }
	if len(evs) != 2 || evs[0].Name != "x" || evs[0].Node != "" || evs[0].Decode(&d) != nil || d.K != 1 || !evs[1].End {
		t.Fatalf("events %+v", evs)
	}
}

// An item sent again (a proxy replaying the stream after a reconnection) is yielded once.
func TestFeed_AnItemSentAgainIsYieldedOnce(t *testing.T) {
	f := &recorded{answers: []func(http.ResponseWriter, *http.Request){
		stream(item(1, "run_started", `{"initial_state": {}}`) + item(2, "node_completed", `{"state": {}}`)),
		stream(item(2, "node_completed", `{"state": {}}`) + item(3, "run_completed", `{"state": {}}`) + endFrame),
	}}
	c, _ := fakeClient(t, f, runsclient.Retry{})
	var seqs []int64
	for ev, err := range c.Feed(t.Context(), "r", runsclient.FeedOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if !ev.End {
			seqs = append(seqs, ev.Seq)
		}
	}
	if !slices.Equal(seqs, []int64{1, 2, 3}) {
		t.Fatalf("seqs %v: want each item once", seqs)
	}
}
