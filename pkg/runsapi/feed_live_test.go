package runsapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

type tokenState struct {
	Done bool `json:"done"`
}

// speakerGraph is a one-node graph name whose node "speak" is speak, with opts.
func speakerGraph(t testing.TB, name string, speak durable.NodeFunc[tokenState], opts ...durable.NodeOption) durable.Graph {
	t.Helper()
	b := durable.NewManifestBuilder[tokenState](name)
	b.SetEntrypoint("speak")
	opts = append([]durable.NodeOption{durable.Terminal(), durable.WithHandlerName("test." + name + ".speak")}, opts...)
	if err := b.AddNode("speak", speak, opts...); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// tokenGraph is a one-node graph "tokens" whose node writes n tokens as chunks, waiting on
// gate after the first half.
func tokenGraph(t *testing.T, n int, gate <-chan struct{}) durable.Graph {
	t.Helper()
	return speakerGraph(t, "tokens", func(ctx context.Context, s tokenState) (any, error) {
		for i := range n {
			if i == n/2 {
				select {
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if err := durable.Write(ctx, "token", fmt.Sprintf("t%d", i)); err != nil {
				return nil, err
			}
		}
		return durable.Update{"done": true}, nil
	})
}

// serveLive serves the runs API over an engine with a live channel, through both transports.
func serveLive(t *testing.T, extra ...durable.Graph) []funchosttest.Transport {
	t.Helper()
	reg := runsapitest.Registry(t, examples.All)
	for _, g := range extra {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	logger := funchosttest.TestLogger(t)
	eng, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Live: memory.NewLiveStore(), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	svc, err := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	return funchosttest.Transports(t, app)
}

// sseFrame is one event-stream frame.
type sseFrame struct{ id, event, data string }

// readFrames reads the frames of one event-stream response from lastID (none: ""), handing
// each to each until it returns false or the response ends; it returns the id of the last
// frame with an id.
func readFrames(t *testing.T, tr funchosttest.Transport, path, lastID string, each func(sseFrame) bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", tr.BaseURL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("feed: %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	var f sseFrame
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if f.event == "" {
				continue
			}
			if f.id != "" {
				lastID = f.id
			}
			if !each(f) {
				return lastID
			}
			f = sseFrame{}
		case strings.HasPrefix(line, "id: "):
			f.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			f.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		}
	}
	return lastID
}

// TestFeed_Live_TokensBeforeTheCommit_ResumedWithoutDuplicate_BothTransports: a node writing
// 20 tokens, the second half held back: the feed's event stream shows the first tokens while
// the node runs (no node_completed yet); the client leaves, resumes with Last-Event-ID and
// gets the rest, each token once and in order, then the commit record, node_completed and the
// end. Under the Functions host each response is a long poll: the same frames, over several.
func TestFeed_Live_TokensBeforeTheCommit_ResumedWithoutDuplicate_BothTransports(t *testing.T) {
	gate := make(chan struct{})
	trs := serveLive(t, tokenGraph(t, 20, gate))
	released := false
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) {
			id := runsapitest.UniqueID(tr, "live")
			runsapitest.Start(t, tr, "tokens", id, `{}`)
			var tokens, events []string
			collect := func(f sseFrame) {
				events = append(events, f.event)
				if f.event != "live" {
					return
				}
				var rec struct {
					Kind string          `json:"kind"`
					Data json.RawMessage `json:"data"`
				}
				if err := json.Unmarshal([]byte(f.data), &rec); err != nil {
					t.Fatalf("live frame %s: %v", f.data, err)
				}
				if rec.Kind == engine.LiveChunk {
					var s string
					_ = json.Unmarshal(rec.Data, &s)
					tokens = append(tokens, s)
				} else {
					tokens = append(tokens, rec.Kind)
				}
			}
			last := ""
			for tries := 0; len(tokens) < 3; tries++ { // some of the first half, the node still running
				if tries == 5 {
					t.Fatalf("no live frame in 5 responses while the node runs: %v", events)
				}
				last = readFrames(t, tr, "/api/runs/"+id+"/feed?wait=5", last, func(f sseFrame) bool {
					collect(f)
					return len(tokens) < 3
				})
			}
			if strings.Contains(strings.Join(events, " "), "node_completed") {
				t.Fatalf("node_completed before the second half was released: %v", events)
			}
			if !released {
				close(gate)
				released = true
			}
			for tries := 0; !strings.HasSuffix(strings.Join(events, " "), "end"); tries++ {
				if tries == 10 {
					t.Fatalf("no end in 10 responses: %v %v", events, tokens)
				}
				last = readFrames(t, tr, "/api/runs/"+id+"/feed?wait=5", last, func(f sseFrame) bool { collect(f); return true })
			}
			var want []string
			for i := range 20 {
				want = append(want, fmt.Sprintf("t%d", i))
			}
			if got := strings.Join(tokens, " "); got != strings.Join(want, " ")+" commit" {
				t.Fatalf("live records:\n%s\nwant the 20 tokens once each, in order, then the commit; events %v", got, events)
			}
		})
	}
}

// TestFeed_Live_JSON_OptIn: the JSON form carries the live channel only with live=true, with
// its live_next to follow; a bad live or live_after is a 400.
func TestFeed_Live_JSON_OptIn(t *testing.T) {
	gate := make(chan struct{})
	close(gate)
	tr := serveLive(t, tokenGraph(t, 4, gate))[0]
	runsapitest.Start(t, tr, "tokens", "json-live", `{}`)
	runsapitest.Poll(t, tr, "json-live", func(v runsapitest.StatusView) bool { return v.RuntimeStatus == "Completed" })
	plain := runsapitest.Call(t, tr, "GET", "/api/runs/json-live/feed?wait=0", "")
	if plain.Status != 200 || strings.Contains(plain.Body, `"live"`) {
		t.Fatalf("without live: %d %s", plain.Status, plain.Body)
	}
	var body struct {
		Live []struct {
			Kind string `json:"kind"`
			Next int64  `json:"next"`
		} `json:"live"`
		LiveNext int64 `json:"live_next"`
	}
	// The step's commit record follows its commit into the channel: the run may read Completed
	// a moment before it is there.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		res := runsapitest.Call(t, tr, "GET", "/api/runs/json-live/feed?wait=0&live=true", "")
		body.Live = nil
		if err := json.Unmarshal([]byte(res.Body), &body); err != nil || res.Status != 200 || len(body.Live) > 5 {
			t.Fatalf("with live: %d %s", res.Status, res.Body)
		}
		if len(body.Live) == 5 || time.Now().After(deadline) {
			if len(body.Live) != 5 || body.LiveNext != body.Live[4].Next || body.Live[4].Kind != "commit" {
				t.Fatalf("with live: %d %s; want the 4 chunks and the commit", res.Status, res.Body)
			}
			break
		}
	}
	after := runsapitest.Call(t, tr, "GET", fmt.Sprintf("/api/runs/json-live/feed?wait=0&live=true&live_after=%d", body.Live[1].Next), "")
	if !strings.Contains(after.Body, `"live": [{"offset": `+fmt.Sprint(body.Live[1].Next)) {
		t.Fatalf("from live_after: %s", after.Body)
	}
	for _, q := range []string{"live=maybe", "live=true&live_after=-1", "live=true&live_after=x"} {
		if r := runsapitest.Call(t, tr, "GET", "/api/runs/json-live/feed?wait=0&"+q, ""); r.Status != 400 {
			t.Errorf("%s: %d %s, want 400", q, r.Status, r.Body)
		}
	}
}
