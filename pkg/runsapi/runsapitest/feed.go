package runsapitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// FeedItem is one decoded item of GET /api/runs/{instance_id}/feed.
type FeedItem struct {
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Name      *string         `json:"name"`
	Node      *string         `json:"node"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// FeedView is a decoded feed answer.
type FeedView struct {
	InstanceID    string     `json:"instance_id"`
	RuntimeStatus string     `json:"runtime_status"`
	Run           string     `json:"run"`
	Items         []FeedItem `json:"items"`
	NextAfter     int64      `json:"next_after"`
}

// Feed GETs the run's feed with query (e.g. "after=3&wait=0"), checks the 200 and that the
// items' seq strictly increase after the query's position, and decodes it. headers are
// name/value pairs.
func Feed(t *testing.T, tr funchosttest.Transport, id, query string, headers ...string) FeedView {
	t.Helper()
	res := Call(t, tr, "GET", "/api/runs/"+id+"/feed?"+query, "", headers...)
	if res.Status != 200 {
		t.Fatalf("GET feed of %s?%s: %d %s", id, query, res.Status, res.Body)
	}
	var v FeedView
	if err := json.Unmarshal([]byte(res.Body), &v); err != nil {
		t.Fatalf("decode feed %s: %v", res.Body, err)
	}
	checkSeqs(t, v.Items, -1)
	return v
}

// checkSeqs checks that the items' seq strictly increase from after (-1: from any).
func checkSeqs(t *testing.T, items []FeedItem, after int64) {
	t.Helper()
	for _, it := range items {
		if after >= 0 && it.Seq <= after {
			t.Fatalf("item seq %d after %d: seq must strictly increase (items %+v)", it.Seq, after, items)
		}
		after = it.Seq
	}
}

// Frame is one Server-Sent Event of a feed.
type Frame struct {
	// ID is the seq of the frame's id (`<seq>.<run>`); -1 when it has none (the end and error
	// frames).
	ID int64
	// Run is the run of the frame's id ("" for none).
	Run string
	// Event and Data are the frame's event name and data.
	Event, Data string
}

// ReadEventStream follows the run's feed as Server-Sent Events from lastEventID until its
// end frame, reconnecting with Last-Event-ID each time a response ends without it, as an
// EventSource does (under the Functions host a response is one long poll): the last frame's id
// as it came. It returns the frames after lastEventID, the end frame last, and how many
// responses it took; each frame's seq must be above the last one's, in one run.
func ReadEventStream(t *testing.T, tr funchosttest.Transport, id string, lastEventID int64, headers ...string) ([]Frame, int) {
	t.Helper()
	var out []Frame
	last, lastID, run := lastEventID, strconv.FormatInt(lastEventID, 10), ""
	for responses := 1; responses <= 200; responses++ {
		req, err := http.NewRequestWithContext(t.Context(), "GET", tr.BaseURL+"/api/runs/"+id+"/feed", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Last-Event-ID", lastID)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET feed stream of %s: %v", id, err)
		}
		if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream; charset=utf-8" {
			res.Body.Close()
			t.Fatalf("GET feed stream of %s: %d, Content-Type %q", id, res.StatusCode, ct)
		}
		frames, err := readFrames(res)
		res.Body.Close()
		if err != nil {
			t.Fatalf("read feed stream of %s: %v", id, err)
		}
		for _, f := range frames {
			switch {
			case f.Event == "end":
				return append(out, f), responses
			case f.Event == "error":
				t.Fatalf("feed stream of %s: error frame %s", id, f.Data)
			case f.ID <= last:
				t.Fatalf("frame id %d after %d: ids must strictly increase (%+v)", f.ID, last, f)
			case f.Run == "" || run != "" && f.Run != run:
				t.Fatalf("frame %+v: want the id of a frame of run %q", f, run)
			}
			last, lastID, run = f.ID, strconv.FormatInt(f.ID, 10)+"."+f.Run, f.Run
			out = append(out, f)
		}
	}
	t.Fatalf("feed stream of %s did not end", id)
	return nil, 0
}

// readFrames reads a response's frames, ignoring comments and retry fields.
func readFrames(res *http.Response) ([]Frame, error) {
	var out []Frame
	f := Frame{ID: -1}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if f.Event != "" || f.Data != "" {
				out = append(out, f)
			}
			f = Frame{ID: -1}
		case strings.HasPrefix(line, "id: "):
			seq, run, _ := strings.Cut(line[4:], ".")
			n, err := strconv.ParseInt(seq, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("bad id line %q", line)
			}
			f.ID, f.Run = n, run
		case strings.HasPrefix(line, "event: "):
			f.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.Data = line[6:]
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry: "):
		default:
			return nil, fmt.Errorf("unexpected line %q", line)
		}
	}
	return out, sc.Err()
}

// CheckFeedFollowsApproval follows a support_agent run, started and waiting for its approval,
// through its feed: from 0 the items are ordered and end at wait_started, as its history says;
// a request at the end with wait=15 does not answer before the approval is sent (inFlight
// returns once that request waits; nil gives it half a second to arrive) and answers with the
// newer items well before its bound; the event stream from the wait_started frame sends only
// the newer frames, in order, and ends when the run has completed. It returns how many
// responses the stream took.
func CheckFeedFollowsApproval(t *testing.T, tr funchosttest.Transport, id string, inFlight func(), headers ...string) int {
	t.Helper()
	first := Feed(t, tr, id, "after=0&wait=0", headers...)
	if first.InstanceID != id || first.RuntimeStatus != "Running" || len(first.Items) == 0 || first.Run == "" {
		t.Fatalf("feed from 0: %+v", first)
	}
	last := first.Items[len(first.Items)-1]
	if last.Type != "wait_started" || first.NextAfter != last.Seq {
		t.Fatalf("feed from 0 ends with %s at %d, next_after %d: want wait_started and next_after its seq", last.Type, last.Seq, first.NextAfter)
	}
	var hist struct {
		Events []struct {
			Sequence int64  `json:"sequence"`
			Type     string `json:"type"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(Call(t, tr, "GET", "/api/runs/"+id+"/history", "", headers...).Body), &hist); err != nil || len(hist.Events) != len(first.Items) {
		t.Fatalf("history (%v) has %d events, the feed %d", err, len(hist.Events), len(first.Items))
	}
	for i, ev := range hist.Events {
		if ev.Sequence != first.Items[i].Seq || ev.Type != first.Items[i].Type {
			t.Fatalf("feed item %d is %d:%s, history %d:%s", i, first.Items[i].Seq, first.Items[i].Type, ev.Sequence, ev.Type)
		}
	}

	type answer struct {
		view FeedView
		err  error
		took time.Duration
	}
	answered := make(chan answer, 1)
	start := time.Now()
	go func() {
		var a answer
		a.err = getJSON(t, tr, fmt.Sprintf("/api/runs/%s/feed?after=%d&run=%s&wait=15", id, first.NextAfter, first.Run), &a.view, headers...)
		a.took = time.Since(start)
		answered <- a
	}()
	if inFlight != nil {
		inFlight()
	} else {
		time.Sleep(500 * time.Millisecond)
	}
	select {
	case a := <-answered:
		t.Fatalf("the long poll answered before the approval was sent: %+v", a.view)
	default:
	}
	res := Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": true, "reviewer": "ann"}`, headers...)
	if res.Status != 202 {
		t.Fatalf("send approval: %d %s", res.Status, res.Body)
	}
	a := <-answered
	if a.err != nil {
		t.Fatalf("long poll: %v", a.err)
	}
	if len(a.view.Items) == 0 || a.view.Items[0].Seq <= first.NextAfter || a.view.Items[0].Type != "event_received" {
		t.Fatalf("the long poll answered %+v, want the newer items from event_received", a.view)
	}
	checkSeqs(t, a.view.Items, first.NextAfter)
	if a.took >= 10*time.Second {
		t.Fatalf("the long poll answered after %s: the run moved at once, its bound is 15 s", a.took)
	}

	frames, responses := ReadEventStream(t, tr, id, first.NextAfter, headers...)
	end := frames[len(frames)-1]
	if end.Data != `{"runtime_status": "Completed"}` {
		t.Fatalf("end frame %+v, want Completed", end)
	}
	var types []string
	for _, f := range frames[:len(frames)-1] {
		var it FeedItem
		if err := json.Unmarshal([]byte(f.Data), &it); err != nil || it.Seq != f.ID || it.Type != f.Event || f.Run != first.Run {
			t.Fatalf("frame %+v does not carry its item (%v)", f, err)
		}
		types = append(types, f.Event)
	}
	want := "event_received event_applied node_completed route_resolved node_completed route_resolved run_completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("frames after wait_started: %s\nwant %s", got, want)
	}
	return responses
}

// getJSON GETs path and decodes a 200's JSON body into v; it never stops the test, so it can
// run on another goroutine.
func getJSON(t *testing.T, tr funchosttest.Transport, path string, v any, headers ...string) error {
	req, err := http.NewRequestWithContext(t.Context(), "GET", tr.BaseURL+path, nil)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != 200 {
		return fmt.Errorf("GET %s: %d %s", path, res.StatusCode, body)
	}
	return json.Unmarshal(body, v)
}
