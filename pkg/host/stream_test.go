package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// dataFrame renders one data frame around a json.dumps-style payload.
func dataFrame(payload string) string { return "event: data\ndata: " + payload + "\n\n" }

const testStreamCap = 1024

// chunkOf returns an object event whose data frame is exactly n bytes.
func chunkOf(n int) string {
	overhead := len(dataFrame(`{"p": ""}`))
	return `{"p": "` + strings.Repeat("x", n-overhead) + `"}`
}

func streamGraphs(cancelled chan error) map[string]InvocableGraph {
	emitAll := func(chunks ...any) func(context.Context, Request, func(any) error) error {
		return func(_ context.Context, _ Request, emit func(any) error) error {
			for _, c := range chunks {
				if err := emit(c); err != nil {
					return err
				}
			}
			return nil
		}
	}
	raw := func(s string) any { return jsonRaw(s) }
	return map[string]InvocableGraph{
		"two": &fakeGraph{stream: emitAll(
			map[string]any{"messages": []any{map[string]string{"role": "assistant", "content": "chunk1"}}},
			map[string]any{"messages": []any{map[string]string{"role": "assistant", "content": "chunk2"}}},
		)},
		"kinds": &fakeGraph{stream: emitAll("hé", 3, []int{1}, nil, raw(`{"z":1,"a":"é"}`))},
		"none":  &fakeGraph{stream: emitAll()},
		"mode": &fakeGraph{stream: func(_ context.Context, req Request, emit func(any) error) error {
			return emit(map[string]string{"mode": req.StreamMode})
		}},
		"fails": &fakeGraph{stream: func(_ context.Context, _ Request, emit func(any) error) error {
			_ = emit(map[string]int{"n": 1})
			return errors.New("secret")
		}},
		"panics": &fakeGraph{stream: func(context.Context, Request, func(any) error) error { panic("secret") }},
		"nan": &fakeGraph{stream: func(_ context.Context, _ Request, emit func(any) error) error {
			_ = emit(map[string]float64{"x": math.NaN()})
			return nil
		}},
		"exact": &fakeGraph{stream: emitAll(raw(chunkOf(testStreamCap/2)), raw(chunkOf(testStreamCap/2)))},
		"over":  &fakeGraph{stream: emitAll(raw(chunkOf(testStreamCap/2)), raw(chunkOf(testStreamCap/2+1)), raw(`{"never": 1}`))},
		"forever": &fakeGraph{stream: func(ctx context.Context, _ Request, emit func(any) error) error {
			for {
				if err := emit(map[string]string{"k": "v"}); err != nil {
					cancelled <- context.Cause(ctx)
					return err
				}
			}
		}},
		"invokeonly": &fakeInvoker{},
		"chat":       &fakeGraph{fakeInvoker: fakeInvoker{checkpointer: true}},
	}
}

func TestStream_Contract_BothTransports(t *testing.T) {
	obs := &recordingObserver{}
	cancelled := make(chan error, 4)
	app := testApp(t, Options{Observer: obs, MaxStreamResponseBytes: testStreamCap}, streamGraphs(cancelled), nil)
	overflow := "event: error\ndata: {\"error\": \"stream response exceeded max buffered size (1024 bytes)\"}\n\n"
	failed := "event: error\ndata: {\"error\": \"stream processing failed\"}\n\n"
	end := "event: end\ndata: {}\n\n"
	tests := []struct {
		name, graph, body string
		status            int
		want              string
		events            []string
	}{
		{name: "two object events", graph: "two", body: `{"input":{}}`, status: 200,
			want: dataFrame(`{"messages": [{"content": "chunk1", "role": "assistant"}]}`) +
				dataFrame(`{"messages": [{"content": "chunk2", "role": "assistant"}]}`) + end,
			events: []string{"started", "completed"}},
		{name: "non-object events wrapped", graph: "kinds", body: `{"input":{}}`, status: 200,
			want: dataFrame(`{"data": "h\u00e9"}`) + dataFrame(`{"data": "3"}`) + dataFrame(`{"data": "[1]"}`) +
				dataFrame(`{"data": "null"}`) + dataFrame(`{"z": 1, "a": "\u00e9"}`) + end,
			events: []string{"started", "completed"}},
		{name: "no events", graph: "none", body: `{"input":{}}`, status: 200, want: end, events: []string{"started", "completed"}},
		{name: "default stream mode", graph: "mode", body: `{"input":{}}`, status: 200,
			want: dataFrame(`{"mode": "values"}`) + end, events: []string{"started", "completed"}},
		{name: "stream mode verbatim", graph: "mode", body: `{"input":{},"stream_mode":"Nonsense"}`, status: 200,
			want: dataFrame(`{"mode": "Nonsense"}`) + end, events: []string{"started", "completed"}},
		{name: "stream mode array is 422", graph: "mode", body: `{"input":{},"stream_mode":["values"]}`, status: 422,
			events: []string{"rejected:invalid_request"}},
		{name: "graph failure in band", graph: "fails", body: `{"input":{}}`, status: 200,
			want: dataFrame(`{"n": 1}`) + failed + end, events: []string{"started", "failed"}},
		{name: "graph panic in band", graph: "panics", body: `{"input":{}}`, status: 200,
			want: failed + end, events: []string{"started", "failed"}},
		{name: "unencodable event is a failure", graph: "nan", body: `{"input":{}}`, status: 200,
			want: failed + end, events: []string{"started", "failed"}},
		{name: "frames exactly at the cap accepted", graph: "exact", body: `{"input":{}}`, status: 200,
			want:   dataFrame(chunkOf(testStreamCap/2)) + dataFrame(chunkOf(testStreamCap/2)) + end,
			events: []string{"started", "completed"}},
		{name: "one byte over the cap overflows", graph: "over", body: `{"input":{}}`, status: 200,
			want: dataFrame(chunkOf(testStreamCap/2)) + overflow + end, events: []string{"started", "failed"}},
		{name: "graph that ignores the cap is stopped", graph: "forever", body: `{"input":{}}`, status: 200,
			want:   strings.Repeat(dataFrame(`{"k": "v"}`), testStreamCap/len(dataFrame(`{"k": "v"}`))) + overflow + end,
			events: []string{"started", "failed"}},
		{name: "invoke-only graph is 501 before the body", graph: "invokeonly", body: `not json`, status: 501,
			want: errBody("Graph 'invokeonly' does not support streaming"), events: []string{"rejected:streaming_unsupported"}},
		{name: "invalid JSON as JSON error", graph: "two", body: `{`, status: 400,
			want: errBody("Invalid JSON body"), events: []string{"rejected:invalid_request"}},
		{name: "checkpointed needs thread", graph: "chat", body: `{"input":{}}`, status: 400,
			want: errBody("config.configurable.thread_id is required for checkpointed graphs"), events: []string{"rejected:invalid_config"}},
		{name: "version refused", graph: "two", body: `{"input":{},"version":"1"}`, status: 422,
			want: errBody("Graph 'two' does not accept a 'version' argument (requires langgraph>=1.1)"), events: []string{"rejected:unsupported_version"}},
		{name: "depth limit", graph: "two", body: `{"input":` + nest(32, "{}") + `}`, status: 400,
			want: errBody("Input exceeds maximum nesting depth of 32"), events: []string{"rejected:invalid_request"}},
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		for _, tt := range tests {
			t.Run(tr.Name+"/"+tt.name, func(t *testing.T) {
				obs.reset()
				got := call(t, tr, "POST", "/api/graphs/"+tt.graph+"/stream", tt.body, tr.FunctionKey)
				if got.status != tt.status {
					t.Fatalf("status = %d, want %d (%.200s)", got.status, tt.status, got.body)
				}
				if tt.want != "" && got.body != tt.want {
					t.Fatalf("body:\n%q\nwant:\n%q", got.body, tt.want)
				}
				if strings.Contains(got.body, "secret") {
					t.Fatalf("error text leaked: %s", got.body)
				}
				if tt.status == 200 {
					for h, want := range map[string]string{"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
						if v := got.header.Get(h); v != want {
							t.Fatalf("%s = %q, want %q", h, v, want)
						}
					}
				} else if ct := got.header.Get("Content-Type"); !isJSONType(ct) {
					t.Fatalf("error Content-Type = %q", ct)
				}
				if ev := obs.events(); fmt.Sprint(ev) != fmt.Sprint([][]string{tt.events}) {
					t.Fatalf("observer events = %v, want %v", ev, tt.events)
				}
			})
		}
	}
	for range 2 { // once per transport
		select {
		case cause := <-cancelled:
			if cause == nil {
				t.Fatal("graph context was not cancelled on overflow")
			}
		default:
			t.Fatal("forever graph did not observe the overflow")
		}
	}
}

func TestStream_DisabledRoute_HostAnswers404(t *testing.T) {
	app := testApp(t, Options{}, map[string]InvocableGraph{"g": &fakeGraph{}}, map[string]RegisterOptions{"g": {NoStream: true}})
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		got := call(t, tr, "POST", "/api/graphs/g/stream", `{"input":{}}`, tr.FunctionKey)
		if got.status != 404 || got.body != "" {
			t.Fatalf("%s: %d %q", tr.Name, got.status, got.body)
		}
		if got := call(t, tr, "POST", "/api/graphs/g/invoke", `{"input":{}}`, tr.FunctionKey); got.status != 200 {
			t.Fatalf("%s: invoke %d", tr.Name, got.status)
		}
	}
}
