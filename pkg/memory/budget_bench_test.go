package memory_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/procmem"
)

// BenchmarkServeMemory_LargeInputsPastTheBudget measures `funcgraph serve` on the in-memory
// backend (`make run`, default memory budget) sent 400 support_agent runs with 1 MiB inputs,
// 8 at a time, each of which would wait forever: the runs the budget admits (202) and
// refuses (507), and the process's RSS, peak RSS and live heap once a GC has run after the
// last start. Without the budget the same load held 2.1 GB. The binary is
// FUNCGRAPH_TEST_HANDLER_BIN (`make bench` builds bin/funcgraph and sets it).
func BenchmarkServeMemory_LargeInputsPastTheBudget(b *testing.B) {
	_, bin, err := procmem.BenchSettings(400, "bench")
	if err != nil {
		b.Fatal(err)
	}
	const runs = 400
	body := strings.Repeat("r", 1<<20-200)
	var admitted, refused, rss, peak, heap float64
	for range b.N {
		s := startServer(b, bin)
		time.Sleep(time.Second)
		var ok, full atomic.Int64
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < runs; i = int(next.Add(1) - 1) {
					out, code, err := s.call(http.MethodPost, "/api/graphs/support_agent/runs",
						fmt.Appendf(nil, `{"instance_id":"big-%d","input":{"user_message":"refund %s"}}`, i, body))
					switch {
					case err == nil && code == http.StatusAccepted:
						ok.Add(1)
					case err == nil && code == http.StatusInsufficientStorage:
						full.Add(1)
					default:
						b.Errorf("start run %d: %d %.200s %v", i, code, out, err)
					}
				}
			})
		}
		wg.Wait()
		s.awaitGC(b)
		time.Sleep(time.Second)
		admitted += float64(ok.Load())
		refused += float64(full.Load())
		rss += s.MB("VmRSS")
		peak += s.MB("VmHWM")
		heap += s.liveHeapMB()
		s.Stop()
	}
	n := float64(b.N)
	b.ReportMetric(admitted/n, "admitted")
	b.ReportMetric(refused/n, "refused-507")
	b.ReportMetric(rss/n, "RSS-MB")
	b.ReportMetric(peak/n, "peak-RSS-MB")
	b.ReportMetric(heap/n, "live-heap-MB")
	b.ReportMetric(0, "ns/op")
}
