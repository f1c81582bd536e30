//go:build integration

package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// azureInstances builds n engines over one table, queue, payload container and live
// container of the test's own on Azurite, as n instances of one app (the registry of g): the
// first runs the dispatcher, the others only serve.
func azureInstances(t testing.TB, n int, g durable.Graph, opts engine.Options) ([]*engine.Engine, *durable.Registry) {
	t.Helper()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	table, name := azuritetest.UniqueName("live"), azuritetest.UniqueName("live-")
	store, err := tablestore.Open(ctx, clients, table)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := queuestore.Open(ctx, clients, name)
	if err != nil {
		t.Fatal(err)
	}
	payloads, err := blobstore.Open(ctx, clients, name)
	if err != nil {
		t.Fatal(err)
	}
	live, err := blobstore.OpenLive(ctx, clients, name+"-live", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = clients.Tables.DeleteTable(ctx, table, nil)
		_, _ = clients.Queues.DeleteQueue(ctx, name, nil)
		_, _ = clients.Blobs.DeleteContainer(ctx, name, nil)
		_, _ = clients.Blobs.DeleteContainer(ctx, name+"-live", nil)
	})
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	var out []*engine.Engine
	for i := range n {
		o := opts
		o.Registry, o.Store, o.Queue, o.Payloads, o.Live = reg, store, queue, payloads, live
		if o.Logger == nil {
			o.Logger = funchosttest.TestLogger(t)
		}
		e, err := engine.New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		if i == 0 {
			if err := e.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, e)
	}
	return out, reg
}

// azureLive returns the live store of the test's own container on Azurite.
func azureLive(t testing.TB) engine.LiveStore {
	t.Helper()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := azuritetest.UniqueName("peer-live-")
	live, err := blobstore.OpenLive(t.Context(), clients, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = clients.Blobs.DeleteContainer(context.Background(), name, nil) })
	return live
}

// BenchmarkIntegrationLive_ChunkAcrossInstances: a node on one instance writes 50 chunks a
// second, each stamped with the time it was written; a feed on another instance follows the
// run's live channel on Azurite (a Length every LivePollInterval while it waits). Reported: the
// latency from Write to the reader (p50, p99) and, measured in the same run, its peer: a raw
// append of the same records to an append blob, one every 100 ms, read by a loop that polls its
// length every 100 ms; and the appends per second and bytes per 1 000 chunks of the channel.
func BenchmarkIntegrationLive_ChunkAcrossInstances(b *testing.B) {
	const chunks, pace = 50, 20 * time.Millisecond
	g := pacedStamps(b, chunks, pace)
	es, _ := azureInstances(b, 2, g, engine.Options{PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	peer := azureLive(b)
	var lat, peerLat []time.Duration
	var bytes int64
	var elapsed time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprint("stamps-", i)
		begun := time.Now()
		if _, err := es[0].StartRun(b.Context(), engine.StartRunRequest{GraphName: "stamps", InstanceID: id, Input: json.RawMessage(`{}`)}); err != nil {
			b.Fatal(err)
		}
		var after, liveAfter int64
		run := ""
		for {
			page, err := es[1].Feed(b.Context(), id, engine.FeedQuery{After: after, Run: run, Wait: 10 * time.Second, Live: true, LiveAfter: liveAfter})
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			for _, r := range page.Live {
				if r.Kind == engine.LiveChunk {
					var s string
					_ = json.Unmarshal(r.Data, &s)
					ns, _ := strconv.ParseInt(s, 10, 64)
					lat = append(lat, now.Sub(time.Unix(0, ns)))
				}
			}
			after, run, liveAfter = page.NextAfter, page.Run, page.LiveNext
			if page.End {
				bytes += liveAfter
				break
			}
		}
		elapsed += time.Since(begun)
		peerLat = append(peerLat, peerRoundTrips(b, peer, fmt.Sprint("peer/", i, "/live"), chunks, pace)...)
	}
	b.StopTimer()
	liveReport(b, "chunk", lat)
	liveReport(b, "peer", peerLat)
	b.ReportMetric(float64(bytes)/float64(b.N*chunks)*1000, "bytes/1000chunks")
	_ = elapsed
}

// peerRoundTrips appends n stamped records to log key, one every pace, coalesced into one
// append every 100 ms, while a reader polls the log's length every 100 ms and reads what is
// new; it returns each record's latency from its stamp to the read.
func peerRoundTrips(b *testing.B, live engine.LiveStore, key string, n int, pace time.Duration) []time.Duration {
	ctx := b.Context()
	done := make(chan []time.Duration)
	go func() {
		var out []time.Duration
		var at int64
		for len(out) < n {
			time.Sleep(100 * time.Millisecond)
			length, err := live.Length(ctx, key)
			if err != nil || length == at {
				continue
			}
			data, _, err := live.Read(ctx, key, at, int(length-at))
			if err != nil {
				continue
			}
			now := time.Now()
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				ns, _ := strconv.ParseInt(line, 10, 64)
				out = append(out, now.Sub(time.Unix(0, ns)))
			}
			at = length
		}
		done <- out
	}()
	var at int64
	var pending []byte
	last := time.Now()
	for i := range n {
		pending = fmt.Appendf(pending, "%d\n", time.Now().UnixNano())
		if time.Since(last) >= 100*time.Millisecond || i == n-1 || i == 0 {
			next, err := live.Append(ctx, key, at, pending)
			if err != nil {
				b.Fatal(err)
			}
			at, pending, last = next, nil, time.Now()
		}
		time.Sleep(pace)
	}
	return <-done
}

// liveReport reports the p50 and p99 of lat as <name>-p50-ms and <name>-p99-ms.
func liveReport(b *testing.B, name string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), name+"-p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), name+"-p99-ms")
}

// pacedStamps is a one-node graph "stamps" whose node writes n chunks, each its own write time
// in Unix nanoseconds, one every pace.
func pacedStamps(t testing.TB, n int, pace time.Duration) durable.Graph {
	t.Helper()
	return speakerGraph(t, "stamps", func(ctx context.Context, s tokenState) (any, error) {
		for range n {
			if err := durable.Write(ctx, "token", strconv.FormatInt(time.Now().UnixNano(), 10)); err != nil {
				return nil, err
			}
			time.Sleep(pace)
		}
		return durable.Update{"done": true}, nil
	})
}

// pacedTokens is a one-node graph "paced" whose node writes n tokens "a<attempt>-t<i>", one
// every pace; its first attempt fails after failAt tokens, and its second waits on gate after
// gateAt.
func pacedTokens(t *testing.T, n, failAt, gateAt int, pace time.Duration, gate <-chan struct{}) durable.Graph {
	t.Helper()
	var attempts atomic.Int32
	return speakerGraph(t, "paced", func(ctx context.Context, s tokenState) (any, error) {
		a := attempts.Add(1)
		for i := range n {
			switch {
			case a == 1 && i == failAt:
				return nil, errors.New("model overloaded")
			case a == 2 && i == gateAt:
				select {
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if err := durable.Write(ctx, "token", fmt.Sprintf("a%d-t%d", a, i)); err != nil {
				return nil, err
			}
			time.Sleep(pace)
		}
		return durable.Update{"done": true}, nil
	}, durable.WithRetry(durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: 10 * time.Millisecond}))
}

// TestIntegrationFeed_Live_TwoInstances_TokensBeforeTheCommit: a node streaming 200 tokens
// over 2 s on one instance (its first attempt failing after 20); a client of the feed's event
// stream on the other instance, both on Azurite, sees the retry's tokens while the node still
// runs (no node_completed), the failed attempt's chunks followed by their retract record; it
// leaves mid-way, resumes with Last-Event-ID and gets the rest, each token once and in order,
// then the commit record.
func TestIntegrationFeed_Live_TwoInstances_TokensBeforeTheCommit(t *testing.T) {
	gate := make(chan struct{})
	es, reg := azureInstances(t, 2, pacedTokens(t, 200, 20, 100, 10*time.Millisecond, gate), engine.Options{PollInterval: 50 * time.Millisecond})
	svc, err := runsapi.NewService(runsapi.Options{Runs: es[1], Registry: reg, Logger: funchosttest.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	tr := funchosttest.Transports(t, app)[0] // the other instance's own server
	if _, err := es[0].StartRun(t.Context(), engine.StartRunRequest{GraphName: "paced", InstanceID: "paced-1", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	var firstRetryToken time.Duration
	var seen, events []string
	var kinds []string // "chunk" records' data, else "<kind>:<attempt of its writer>"
	writerAttempt := map[string]int{}
	collect := func(f sseFrame) {
		events = append(events, f.event)
		if f.event != "live" {
			return
		}
		var rec struct {
			Kind    string          `json:"kind"`
			Writer  string          `json:"writer"`
			Attempt *int            `json:"attempt"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(f.data), &rec); err != nil {
			t.Fatalf("live frame %s: %v", f.data, err)
		}
		if rec.Kind == engine.LiveChunk {
			var s string
			_ = json.Unmarshal(rec.Data, &s)
			seen = append(seen, s)
			writerAttempt[rec.Writer] = *rec.Attempt
			if *rec.Attempt == 2 && firstRetryToken == 0 {
				firstRetryToken = time.Since(started)
			}
			kinds = append(kinds, s)
			return
		}
		kinds = append(kinds, fmt.Sprintf("%s:a%d", rec.Kind, writerAttempt[rec.Writer]))
	}
	last := ""
	for tries := 0; len(seen) < 70; tries++ { // the failed attempt's 20 and 50 of the retry's
		if tries == 20 {
			t.Fatalf("%d chunks after 20 responses: %v", len(seen), seen)
		}
		last = readFrames(t, tr, "/api/runs/paced-1/feed?wait=5", last, func(f sseFrame) bool {
			collect(f)
			return len(seen) < 70
		})
	}
	if strings.Contains(strings.Join(events, " "), "node_completed") {
		t.Fatalf("node_completed before the retry was released: %v", events)
	}
	close(gate) // the retry goes on past token 100 while the client is away
	for tries := 0; !strings.HasSuffix(strings.Join(events, " "), "end"); tries++ {
		if tries == 20 {
			t.Fatalf("no end after 20 responses: %v", kinds)
		}
		last = readFrames(t, tr, "/api/runs/paced-1/feed?wait=5", last, func(f sseFrame) bool { collect(f); return true })
	}
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("a1-t%d", i))
	}
	want = append(want, "retract:a1")
	for i := range 200 {
		want = append(want, fmt.Sprintf("a2-t%d", i))
	}
	want = append(want, "commit:a2")
	if got := strings.Join(kinds, " "); got != strings.Join(want, " ") {
		t.Fatalf("live records on the other instance:\n%s\nwant\n%s", got, strings.Join(want, " "))
	}
	t.Logf("first token of the retry on the other instance %v after the start", firstRetryToken)
}
