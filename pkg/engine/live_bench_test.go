package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// BenchmarkLive_ChunkToReader_InProcess: a node writes 50 chunks a second, each stamped with
// the time it was written; a feed in the same process follows the run's live channel. Reported:
// the latency from Write to the reader (p50, p99), beside its peer measured in the same run, the
// latency from a step's commit to the feed item of the next step's start — and the live
// channel's appends per second and bytes per 1 000 chunks.
func BenchmarkLive_ChunkToReader_InProcess(b *testing.B) {
	for _, flush := range []time.Duration{engine.DefaultLiveFlushInterval, 2 * time.Millisecond} {
		b.Run("flush="+flush.String(), func(b *testing.B) { benchChunkToReader(b, flush) })
	}
}

func benchChunkToReader(b *testing.B, flush time.Duration) {
	const chunks, pace = 50, 20 * time.Millisecond
	node := func(ctx context.Context, s counterState) (any, error) {
		for range chunks {
			if err := durable.Write(ctx, "token", strconv.FormatInt(time.Now().UnixNano(), 10)); err != nil {
				return nil, err
			}
			time.Sleep(pace)
		}
		return durable.Update{"n": s.N + 1}, nil
	}
	g := chainGraph(b, "bench-live", 2, node)
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		b.Fatal(err)
	}
	live := &countingLive{LiveStore: memory.NewLiveStore()}
	e, err := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Live: live, Logger: quiet, PollInterval: 5 * time.Millisecond, LiveFlushInterval: flush})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var chunkLat, commitLat []time.Duration
	var bytes, appends int64
	var elapsed time.Duration
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprint("bench-live-", i)
		appendsBefore := live.appends.Load()
		begun := time.Now()
		if _, err := e.StartRun(context.Background(), engine.StartRunRequest{GraphName: "bench-live", InstanceID: id, Input: json.RawMessage(`{}`)}); err != nil {
			b.Fatal(err)
		}
		var after, liveAfter int64
		run := ""
		for {
			page, err := e.Feed(context.Background(), id, engine.FeedQuery{After: after, Run: run, Wait: 10 * time.Second, Live: true, LiveAfter: liveAfter})
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			for _, r := range page.Live {
				if r.Kind != engine.LiveChunk {
					continue
				}
				var s string
				_ = json.Unmarshal(r.Data, &s)
				ns, _ := strconv.ParseInt(s, 10, 64)
				chunkLat = append(chunkLat, now.Sub(time.Unix(0, ns)))
			}
			for _, it := range page.Items {
				if it.Type == engine.HistoryNodeCompleted {
					commitLat = append(commitLat, now.Sub(it.Timestamp))
				}
			}
			after, run, liveAfter = page.NextAfter, page.Run, page.LiveNext
			if page.End {
				bytes += liveAfter
				break
			}
		}
		elapsed += time.Since(begun)
		appends += live.appends.Load() - appendsBefore
	}
	b.StopTimer()
	reportLatency(b, "chunk", chunkLat)
	reportLatency(b, "commit-peer", commitLat)
	b.ReportMetric(float64(appends)/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(bytes)/float64(b.N*2*chunks)*1000, "bytes/1000chunks")
}

// reportLatency reports the p50 and p99 of lat as <name>-p50-ms and <name>-p99-ms.
func reportLatency(b *testing.B, name string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), name+"-p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), name+"-p99-ms")
}
