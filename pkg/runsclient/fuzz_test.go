package runsclient_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// FuzzFeed_AnyStream: whatever one answer of the event stream holds, Feed neither panics nor
// yields an item of a frame id twice or out of order within its run, and it ends (the next
// answer is the end).
func FuzzFeed_AnyStream(f *testing.F) {
	f.Add(item(1, "run_started", `{"initial_state": {"a": 1}}`) + item(2, "node_completed", `{"update": {"a": {"set": 2}}}`))
	f.Add("retry: 0\n: keep-alive\n\nid: 3.r\nevent: custom\ndata: {\"seq\": 3}\n\n")
	f.Add("event: error\ndata: {\"error\": \"x\"}\n\n")
	f.Add("id: 1.r.9\nevent: live\ndata: {\"offset\": 0, \"next\": 9, \"kind\": \"chunk\"}\n\n")
	f.Add("data: not json\n\nid:\nevent: node_completed\ndata: {\"seq\": 1, \"type\": \"node_completed\", \"data\": {\"update\": 7}}\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		rec := &recorded{answers: []func(http.ResponseWriter, *http.Request){stream(body), stream(endFrame)}}
		c, _ := fakeClient(t, rec, runsclient.Retry{MaxAttempts: 2})
		last, lastRun := int64(-1), ""
		for ev, err := range c.Feed(t.Context(), "r", runsclient.FeedOptions{}) {
			if err != nil || ev.End || ev.Type == "live" || ev.Cursor == "" {
				continue
			}
			seq, run, _ := strings.Cut(ev.Cursor, ".")
			run, _, _ = strings.Cut(run, ".")
			n, perr := strconv.ParseInt(seq, 10, 64)
			if perr != nil || run == "" {
				continue
			}
			if run == lastRun && n <= last {
				t.Fatalf("frame %s after seq %d of run %s", ev.Cursor, last, lastRun)
			}
			last, lastRun = n, run
		}
		if rec.count() > 3 {
			t.Fatalf("%d connections for one answer and the end", rec.count())
		}
	})
}
