package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
)

// The host.Func echo benchmarks measure what the framework costs: the same JSON echo as the
// bare net/http peer (messages in, messages plus the assistant's reply out), written as a
// host.Func, so no checkpointer, lock or thread is involved. The echo_agent benchmarks
// (bench_test.go) add what that graph chooses to do: a checkpoint per call.

// funcEchoName is the graph name of the host.Func echo.
const funcEchoName = "func_echo"

// funcEcho answers the input's messages plus an assistant message echoing the last one.
var funcEcho = host.Func[echoagent.State, echoagent.State](func(_ context.Context, in echoagent.State) (echoagent.State, error) {
	reply := echoagent.Message{Role: "assistant"}
	if n := len(in.Messages); n > 0 {
		reply.Content = in.Messages[n-1].Content
	}
	return echoagent.State{Messages: append(in.Messages, reply)}, nil
})

// funcEchoHandler is the custom handler serving funcEcho as fg_func_echo_invoke.
func funcEchoHandler(tb testing.TB) http.Handler {
	app, err := host.New(host.Options{Logger: discardLogger})
	if err != nil {
		tb.Fatal(err)
	}
	if err := app.Register(funcEcho, funcEchoName, host.RegisterOptions{}); err != nil {
		tb.Fatal(err)
	}
	return app.FunctionApp().CustomHandler(funchost.HandlerOptions{Logger: discardLogger})
}

// invocationOf builds the host's JSON invocation of fg_<graph>_invoke around body.
func invocationOf(tb testing.TB, graph string, body []byte) []byte {
	payload, err := json.Marshal(map[string]any{
		"Data": map[string]any{"req": map[string]any{
			"Url": "http://localhost:7071/api/graphs/" + graph + "/invoke", "Method": "POST", "Query": map[string]string{},
			"Headers": map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(body))}},
			"Params":  map[string]string{}, "Body": string(body),
		}},
		"Metadata": map[string]any{"sys": map[string]string{"MethodName": "fg_" + graph + "_invoke"}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return payload
}

// latencies records the duration of each call of op and reports the percentiles docs/benchmarks.md's
// latency chart draws (p10 … p99, in µs).
func latencies(b *testing.B, op func()) {
	b.ReportAllocs()
	lat := make([]time.Duration, 0, 1<<16)
	for b.Loop() {
		start := time.Now()
		op()
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	for _, p := range []int{10, 25, 50, 75, 90, 99} {
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*p/100)].Nanoseconds())/1000, fmt.Sprintf("p%d-µs", p))
	}
}

func BenchmarkInvokeFuncEchoCustomHandler(b *testing.B) {
	h := funcEchoHandler(b)
	payload := invocationOf(b, funcEchoName, echoBody("bench"))
	path := "/fg_" + funcEchoName + "_invoke"
	serveOnce(b, h, path, payload)
	latencies(b, func() { serveOnce(b, h, path, payload) })
}

func BenchmarkInvokeFuncEchoCustomHandlerLoopback(b *testing.B) {
	c, base := loopbackClient(b, funcEchoHandler(b))
	payload := invocationOf(b, funcEchoName, echoBody("bench"))
	url := base + "/fg_" + funcEchoName + "_invoke"
	postOnce(b, c, url, payload)
	latencies(b, func() { postOnce(b, c, url, payload) })
}

// funcEchoAllocBudget is the most allocations one invoke of the host.Func echo may make in
// process, through the whole custom-handler path (invocation decode, routing, admission,
// the graph run, the reply's encoding), test request and recorder included (the bare net/http
// peer: 40). Measured: 38 (see TestInvokeFuncEcho_AllocBudget's log); a change that needs
// more must say why in docs/benchmarks.md's invoke table. Under -race the budget grows by
// raceAllocSlack.
const funcEchoAllocBudget = 38

func TestInvokeFuncEcho_AllocBudget(t *testing.T) {
	h := funcEchoHandler(t)
	payload := invocationOf(t, funcEchoName, echoBody("bench"))
	path := "/fg_" + funcEchoName + "_invoke"
	serveOnce(t, h, path, payload) // warm: lazily built tables, pools
	allocs := testing.AllocsPerRun(200, func() { serveOnce(t, h, path, payload) })
	budget := funcEchoAllocBudget + raceAllocSlack
	t.Logf("host.Func echo invoke, in process: %.0f allocations (budget %d)", allocs, budget)
	if allocs > float64(budget) {
		t.Fatalf("host.Func echo invoke allocates %.0f times, above its budget of %d", allocs, budget)
	}
}
