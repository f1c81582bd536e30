package runsapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// watchedFeeds is the engine with a signal per run: a feed request that is about to wait
// (wait > 0, after > 0) on that run.
type watchedFeeds struct {
	*engine.Engine
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

func (w *watchedFeeds) signal(id string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiting[id] == nil {
		w.waiting[id] = make(chan struct{}, 1)
	}
	return w.waiting[id]
}

func (w *watchedFeeds) Feed(ctx context.Context, id string, q engine.FeedQuery) (engine.FeedPage, error) {
	if q.Wait > 0 && q.After > 0 {
		select {
		case w.signal(id) <- struct{}{}:
		default:
		}
	}
	return w.Engine.Feed(ctx, id, q)
}

// serveFeeds serves the runs API over a started in-memory engine, watched, through both
// transports; the registry holds the examples and extra.
func serveFeeds(t *testing.T, api runsapi.Options, extra ...durable.Graph) (*watchedFeeds, []funchosttest.Transport) {
	t.Helper()
	reg := runsapitest.Registry(t, examples.All)
	for _, g := range extra {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	logger := funchosttest.TestLogger(t)
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: logger, MaxSteps: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	w := &watchedFeeds{Engine: eng, waiting: map[string]chan struct{}{}}
	api.Runs, api.Registry, api.Logger = w, reg, logger
	svc, err := runsapi.NewService(api)
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	return w, funchosttest.Transports(t, app)
}

// TestFeed_SupportAgent_BothTransports: a support_agent run's feed from 0 lists its ordered
// items up to wait_started; a request after the last with wait=15 answers with the newer items
// once the approval is sent, not before; the event stream from there sends only the newer
// frames and ends when the run completes — in one response from funcgraph's own server, in
// long polls under the Functions host.
func TestFeed_SupportAgent_BothTransports(t *testing.T) {
	w, trs := serveFeeds(t, runsapi.Options{})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "feed")
			runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "I want a refund for invoice 42"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Waiting)
			responses := runsapitest.CheckFeedFollowsApproval(t, tr, id, func() { <-w.signal(id) })
			if tr.Name == funchosttest.TransportStandalone && responses != 1 {
				t.Fatalf("the stream took %d responses from the standalone server, want one", responses)
			}
		})
	}
}

// TestFeed_EventStream_Serve_FlushesAsTheRunMoves: served by funcgraph's own server, the
// stream's header reaches the client before the run moves, and its frames follow as the run
// writes them, in one response that ends with the run.
func TestFeed_EventStream_Serve_FlushesAsTheRunMoves(t *testing.T) {
	_, trs := serveFeeds(t, runsapi.Options{})
	tr := trs[0]
	id := "live"
	runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund please"}`)
	runsapitest.Poll(t, tr, id, runsapitest.Waiting)
	last := runsapitest.Feed(t, tr, id, "wait=0").NextAfter
	req, _ := http.NewRequestWithContext(t.Context(), "GET", fmt.Sprintf("%s/api/runs/%s/feed?after=%d", tr.BaseURL, id, last), nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req) // returns with the header: the run has not moved
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
	if r := runsapitest.Call(t, tr, "POST", "/api/runs/"+id+"/events/approval", `{"approved": false}`); r.Status != 202 {
		t.Fatalf("approval: %d %s", r.Status, r.Body)
	}
	var events []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, ev)
		}
	}
	if got := strings.Join(events, " "); !strings.HasPrefix(got, "event_received event_applied") || !strings.HasSuffix(got, "run_completed end") {
		t.Fatalf("events %s", got)
	}
}

// TestFeed_EventStream_Host_IsALongPoll: under the Functions host a stream response waits up
// to its wait for a frame, then ends, asking the client to reconnect soon.
func TestFeed_EventStream_Host_IsALongPoll(t *testing.T) {
	_, trs := serveFeeds(t, runsapi.Options{})
	tr := trs[1]
	id := "poll"
	runsapitest.Start(t, tr, "support_agent", id, `{"user_message": "refund please"}`)
	runsapitest.Poll(t, tr, id, runsapitest.Waiting)
	last := runsapitest.Feed(t, tr, id, "wait=0").NextAfter
	res := runsapitest.Call(t, tr, "GET", fmt.Sprintf("/api/runs/%s/feed?wait=0.2", id), "", "Accept", "text/event-stream", "Last-Event-ID", fmt.Sprint(last))
	if res.Status != 200 || res.Body != "retry: 500\n\n: keep-alive\n\n" || res.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("%d %q %v", res.Status, res.Body, res.Header)
	}
	res = runsapitest.Call(t, tr, "GET", "/api/runs/"+id+"/feed?after=1&wait=0", "", "Accept", "text/event-stream")
	run := runsapitest.Feed(t, tr, id, "wait=0").Run
	if !strings.HasPrefix(res.Body, "retry: 500\n\nid: 2."+run+"\nevent: node_completed\ndata: {\"seq\": 2, ") || strings.Contains(res.Body, "event: end") {
		t.Fatalf("frames after 1: %q", res.Body)
	}
}

func TestFeed_Errors_BothTransports(t *testing.T) {
	_, trs := serveFeeds(t, runsapi.Options{MaxWait: 30 * time.Second})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "errors")
			runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "u"}`)
			badAfter := `{"error": "invalid query parameter 'after': want the seq of an item of this feed, an integer of 0 or more"}`
			badWait := `{"error": "invalid query parameter 'wait': want a number of seconds from 0 to 30"}`
			badLast := `{"error": "invalid header 'Last-Event-ID': want the id of a frame of this feed (<seq>.<run>), or an integer of 0 or more"}`
			badRun := `{"error": "invalid query parameter 'run': want the run of an answer of this feed"}`
			notFound := `{"error": "instance not found"}`
			for _, tt := range []struct {
				path    string
				headers []string
				status  int
				body    string
			}{
				{"/api/runs/nope/feed", nil, 404, notFound},
				{"/api/runs/nope/feed?wait=1", []string{"Accept", "text/event-stream"}, 404, notFound},
				{"/api/runs/" + id + "/feed?after=-1", nil, 400, badAfter},
				{"/api/runs/" + id + "/feed?after=x", nil, 400, badAfter},
				{"/api/runs/" + id + "/feed?after=1.5", nil, 400, badAfter},
				{"/api/runs/" + id + "/feed?wait=-1", nil, 400, badWait},
				{"/api/runs/" + id + "/feed?wait=31", nil, 400, badWait},
				{"/api/runs/" + id + "/feed?wait=1e1", nil, 400, badWait},
				{"/api/runs/" + id + "/feed?wait=NaN", nil, 400, badWait},
				{"/api/runs/" + id + "/feed?wait=abc", nil, 400, badWait},
				{"/api/runs/" + id + "/feed?wait=5", []string{"Last-Event-ID", "seven"}, 400, badLast},
				{"/api/runs/" + id + "/feed?wait=5", []string{"Last-Event-ID", "7."}, 400, badLast},
				{"/api/runs/" + id + "/feed?wait=5", []string{"Last-Event-ID", "7.a-b"}, 400, badLast},
				{"/api/runs/" + id + "/feed?wait=5", []string{"Last-Event-ID", ".abc"}, 400, badLast},
				{"/api/runs/" + id + "/feed?run=a-b", nil, 400, badRun},
				{"/api/runs/" + id + "/feed?run=" + strings.Repeat("a", 65), nil, 400, badRun},
				{"/api/runs/nope/feed?after=-1", nil, 400, badAfter}, // parameters first, as for history
			} {
				runsapitest.Call(t, tr, "GET", tt.path, "", tt.headers...).Expect(t, tt.path, tt.status, tt.body)
			}
		})
	}
}

// TestFeed_PositionOfAReplacedRun_Conflict_BothTransports: an answer names its run, and a
// position in a run the id no longer holds — replaced by a new start of the id — is answered
// 409, as JSON and as an event stream resuming from a frame's id; the new run is read from
// after=0, and its own positions work.
func TestFeed_PositionOfAReplacedRun_Conflict_BothTransports(t *testing.T) {
	_, trs := serveFeeds(t, runsapi.Options{})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "replaced")
			runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "u"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Finished)
			old := runsapitest.Feed(t, tr, id, "")
			frames, _ := runsapitest.ReadEventStream(t, tr, id, 2)
			if old.Run == "" || frames[0].Run != old.Run {
				t.Fatalf("the answer names run %q, its frames %q", old.Run, frames[0].Run)
			}
			runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "u"}`) // replaces the finished run
			runsapitest.Poll(t, tr, id, runsapitest.Finished)
			replaced := `{"error": "the feed position is in another run of this instance id, which was replaced or purged: read the feed again from after=0 without run"}`
			for _, tt := range []struct {
				path    string
				headers []string
			}{
				{fmt.Sprintf("/api/runs/%s/feed?after=%d&run=%s", id, old.NextAfter, old.Run), nil},
				{fmt.Sprintf("/api/runs/%s/feed?after=0&run=%s&wait=5", id, old.Run), nil},
				{fmt.Sprintf("/api/runs/%s/feed", id), []string{"Accept", "text/event-stream", "Last-Event-ID", fmt.Sprintf("2.%s", old.Run)}},
			} {
				runsapitest.Call(t, tr, "GET", tt.path, "", tt.headers...).Expect(t, tt.path, 409, replaced)
			}
			fresh := runsapitest.Feed(t, tr, id, "after=0")
			if fresh.Run == "" || fresh.Run == old.Run || len(fresh.Items) == 0 || fresh.Items[0].Seq != 1 {
				t.Fatalf("the new run's feed: run %q (the old %q), %d items", fresh.Run, old.Run, len(fresh.Items))
			}
			if v := runsapitest.Feed(t, tr, id, "after=2&run="+fresh.Run); len(v.Items) == 0 || v.Items[0].Seq != 3 || v.Run != fresh.Run {
				t.Fatalf("the new run's own position: %+v", v)
			}
		})
	}
}

// TestFeed_FinishedRun_AnswersAtOnce: at the end of a finished run a request answers at once
// with no item, whatever its wait; the stream sends its end frame.
func TestFeed_FinishedRun_AnswersAtOnce(t *testing.T) {
	_, trs := serveFeeds(t, runsapi.Options{})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "finished")
			runsapitest.Start(t, tr, "data_pipeline", id, `{"source_url": "u"}`)
			runsapitest.Poll(t, tr, id, runsapitest.Finished)
			all := runsapitest.Feed(t, tr, id, "")
			if all.RuntimeStatus != "Completed" || all.Items[len(all.Items)-1].Type != "run_completed" {
				t.Fatalf("feed of a completed run: %+v", all)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // far below the wait
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/runs/%s/feed?after=%d&wait=200", tr.BaseURL, id, all.NextAfter), nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var v runsapitest.FeedView
			_ = json.NewDecoder(res.Body).Decode(&v)
			res.Body.Close()
			if res.StatusCode != 200 || len(v.Items) != 0 || v.Items == nil || v.NextAfter != all.NextAfter || v.RuntimeStatus != "Completed" {
				t.Fatalf("%d %+v", res.StatusCode, v)
			}
			frames, _ := runsapitest.ReadEventStream(t, tr, id, all.NextAfter)
			if len(frames) != 1 || frames[0].Data != `{"runtime_status": "Completed"}` {
				t.Fatalf("frames %+v, want the end frame only", frames)
			}
		})
	}
}

// TestFeed_PagesAndEmittedEvents: a long run's feed comes in pages of at most 100 items that
// follow one another; the events its node emits are items of type custom.
func TestFeed_PagesAndEmittedEvents(t *testing.T) {
	type spinState struct {
		N int `json:"n"`
	}
	b := durable.NewManifestBuilder[spinState]("spinner")
	b.SetEntrypoint("spin")
	_ = b.AddNode("spin", func(ctx context.Context, s spinState) (any, error) {
		if err := durable.Emit(ctx, "lap", map[string]int{"n": s.N}); err != nil {
			return nil, err
		}
		return durable.Update{"n": s.N + 1}, nil
	}, durable.WithRoute(func(_ context.Context, s spinState) (any, error) {
		if s.N >= 60 {
			return durable.Complete("done"), nil
		}
		return "spin", nil
	}))
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, trs := serveFeeds(t, runsapi.Options{}, g)
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "spin")
			runsapitest.Start(t, tr, "spinner", id, `{}`)
			runsapitest.Poll(t, tr, id, runsapitest.Finished)
			var after int64
			var items []runsapitest.FeedItem
			for {
				v := runsapitest.Feed(t, tr, id, fmt.Sprintf("after=%d", after))
				if len(v.Items) > engine.FeedPageSize {
					t.Fatalf("a page of %d items", len(v.Items))
				}
				if len(v.Items) == 0 {
					break
				}
				if v.Items[0].Seq != after+1 {
					t.Fatalf("page after %d starts at %d", after, v.Items[0].Seq)
				}
				items, after = append(items, v.Items...), v.NextAfter
			}
			laps := 0
			for _, it := range items {
				if it.Type == "custom" {
					want := fmt.Sprintf(`{"name": "lap", "data": {"n": %d}}`, laps)
					if got := string(it.Data); got != want || *it.Name != "lap" || *it.Node != "spin" {
						t.Fatalf("custom item %d: name %v node %v data %s, want %s", it.Seq, *it.Name, *it.Node, got, want)
					}
					laps++
				}
			}
			if laps != 60 || len(items) != 1+60*3+1 { // run_started, 60 visits of custom, node_completed, route_resolved, run_completed
				t.Fatalf("%d items, %d laps", len(items), laps)
			}
		})
	}
}

// TestFeed_Isolation_AnotherIdentitysRunIsNotFound: under isolation the feed of another
// identity's run answers as for a run that does not exist.
func TestFeed_Isolation_AnotherIdentitysRunIsNotFound(t *testing.T) {
	for _, tr := range serveIsolated(t, newIsolation(t, "127.0.0.1/32")) {
		t.Run(tr.Name, func(t *testing.T) {
			key := tr.FunctionKey
			r := as(t, tr, "alice", key, "POST", "/api/graphs/support_agent/runs", `{"input": {"user_message": "refund"}}`)
			if r.Status != 202 {
				t.Fatalf("start: %d %s", r.Status, r.Body)
			}
			var started struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal([]byte(r.Body), &started)
			path := "/api/runs/" + started.ID + "/feed?wait=0"
			if r := as(t, tr, "bob", key, "GET", path, ""); r.Status != 404 || r.Body != `{"error": "instance not found"}` {
				t.Fatalf("bob: %d %s", r.Status, r.Body)
			}
			if r := as(t, tr, "alice", key, "GET", path, ""); r.Status != 200 {
				t.Fatalf("alice: %d %s", r.Status, r.Body)
			}
			if r := as(t, tr, "", key, "GET", path, ""); r.Status != 401 {
				t.Fatalf("no identity: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestFeed_MaxWait: the bound is the service's MaxWait, inherited from the hosting app when
// mounted, and below the Azure front end's cut.
func TestFeed_MaxWait(t *testing.T) {
	reg := runsapitest.Registry(t, examples.All)
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, MaxWait: funchost.FrontEndTimeout}); !errors.Is(err, runsapi.ErrInvalidServiceOptions) {
		t.Fatalf("MaxWait at the front end's cut: %v", err)
	}
	h, err := host.New(host.Options{AuthLevel: funchost.AuthAnonymous, MaxWait: 7 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := runsapi.Mount(svc, h, runsapi.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(h.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]struct{ Responses map[string]json.RawMessage } `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Paths["/api/runs/{instance_id}/feed"]["get"].Responses
	if got["200"] == nil || got["400"] == nil || got["404"] == nil || doc.Components.Schemas["RunFeed"] == nil || doc.Components.Schemas["FeedItem"] == nil {
		t.Fatalf("openapi.json documents the feed as %v (schemas RunFeed %s)", got, doc.Components.Schemas["RunFeed"])
	}
	tr := funchosttest.Transports(t, h.FunctionApp())[0]
	runsapitest.Call(t, tr, "GET", "/api/runs/x/feed?wait=8", "").Expect(t, "wait above the app's bound", 400,
		`{"error": "invalid query parameter 'wait': want a number of seconds from 0 to 7"}`)
	runsapitest.Call(t, tr, "GET", "/api/runs/x/feed?wait=7", "").Expect(t, "wait at the bound", 404, `{"error": "instance not found"}`)
}
