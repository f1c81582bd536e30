package tracing_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/tracing"
)

type echoIn struct {
	Text string `json:"text"`
}

func newProvider() (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	return sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), exp
}

// clientSpan starts the caller's span and returns the traceparent header to send.
func clientSpan(tp trace.TracerProvider) (trace.Span, string) {
	ctx, span := tp.Tracer("client").Start(context.Background(), "client")
	c := propagation.HeaderCarrier(http.Header{})
	propagation.TraceContext{}.Inject(ctx, c)
	return span, c.Get("traceparent")
}

func send(t *testing.T, h http.Handler, path, body, traceparent string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("x-functions-key", "k")
	req.Header.Set("traceparent", traceparent)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return string(b)
}

func byName(spans tracetest.SpanStubs) map[string][]tracetest.SpanStub {
	out := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		out[s.Name] = append(out[s.Name], s)
	}
	return out
}

func one(t *testing.T, m map[string][]tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	if len(m[name]) != 1 {
		t.Fatalf("%d spans named %q, want 1 (have %v)", len(m[name]), name, keys(m))
	}
	return m[name][0]
}

func keys(m map[string][]tracetest.SpanStub) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}

func childOf(t *testing.T, child, parent tracetest.SpanStub) {
	t.Helper()
	if child.Parent.SpanID() != parent.SpanContext.SpanID() || child.SpanContext.TraceID() != parent.SpanContext.TraceID() {
		t.Fatalf("span %q (parent %s, trace %s) is not a child of %q (%s, trace %s)", child.Name, child.Parent.SpanID(),
			child.SpanContext.TraceID(), parent.Name, parent.SpanContext.SpanID(), parent.SpanContext.TraceID())
	}
}

func TestTracing_Invoke_SpanIsAChildOfTheRequest(t *testing.T) {
	t.Parallel()
	tp, exp := newProvider()
	opts := tracing.Options{TracerProvider: tp}
	app, err := host.New(host.Options{Observer: tracing.NewHostObserver(opts, nil), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	_ = app.Register(host.Func[echoIn, echoIn](func(_ context.Context, in echoIn) (echoIn, error) { return in, nil }), "echo", host.RegisterOptions{})
	h := tracing.Middleware(app.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{Master: "k"}}), opts)
	client, traceparent := clientSpan(tp)
	if got := send(t, h, "/api/graphs/echo/invoke", `{"input":{"text":"hi"}}`, traceparent); got != `{"output":{"text":"hi"}}` {
		t.Fatalf("invoke answered %s", got)
	}
	client.End()
	spans := byName(exp.GetSpans())
	server := one(t, spans, "POST /api/graphs/echo/invoke")
	invoke := one(t, spans, "invoke echo")
	childOf(t, server, one(t, spans, "client"))
	childOf(t, invoke, server)
	if attr(invoke, tracing.AttrGraph) != "echo" || attr(invoke, tracing.AttrRunID) == "" {
		t.Fatalf("invoke attributes %v", invoke.Attributes)
	}
}

func TestTracing_DurableRunWithAnEvent_OneTraceAcrossTwoWorkers(t *testing.T) {
	t.Parallel()
	tp, exp := newProvider()
	opts := tracing.Options{TracerProvider: tp}
	reg := durable.NewRegistry()
	if err := reg.Register(examples.MustSupportAgent()); err != nil {
		t.Fatal(err)
	}
	// Two engines share storage: two workers of one app.
	store, queue, payloads := memory.NewStore(), memory.NewQueue(), memory.NewPayloadStore()
	newWorker := func() *engine.Engine {
		e, err := engine.New(engine.Options{Registry: reg, Store: store, Queue: queue, Payloads: payloads,
			Observer: tracing.NewEngineObserver(opts, nil)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	w1, w2 := newWorker(), newWorker()
	handleAll := func(w *engine.Engine) int {
		n := 0
		for {
			msgs, err := queue.Receive(t.Context(), 1, time.Minute)
			if err != nil || len(msgs) == 0 {
				return n
			}
			if err := w.HandleWorkItem(t.Context(), msgs[0].Body, msgs[0].DequeueCount); err != nil {
				t.Fatal(err)
			}
			_ = queue.Delete(t.Context(), msgs[0])
			n++
		}
	}
	app, _ := host.New(host.Options{Logger: slog.New(slog.DiscardHandler)})
	svc, _ := runsapi.NewService(runsapi.Options{Runs: w1, Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	if err := runsapi.Mount(svc, app, runsapi.MountOptions{}); err != nil {
		t.Fatal(err)
	}
	h := tracing.Middleware(app.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{Master: "k"}}), opts)

	client, traceparent := clientSpan(tp)
	send(t, h, "/api/graphs/support_agent/runs", `{"instance_id":"r1","input":{"user_message":"refund please"}}`, traceparent)
	client.End()
	if n := handleAll(w1); n != 1 {
		t.Fatalf("worker 1 handled %d items, want 1", n)
	}
	// The event comes in another request, with a trace of its own.
	other, otherParent := clientSpan(tp)
	send(t, h, "/api/runs/r1/events/approval", `{"approved":true,"reviewer":"ana"}`, otherParent)
	other.End()
	if n := handleAll(w2); n != 1 {
		t.Fatalf("worker 2 handled %d items, want 1", n)
	}
	if run, _ := w1.GetRun(t.Context(), "r1"); run.RuntimeStatus != engine.StatusCompleted {
		t.Fatalf("run %s", run.RuntimeStatus)
	}

	spans := byName(exp.GetSpans())
	start := one(t, spans, "POST /api/graphs/support_agent/runs")
	run := one(t, spans, "durable.run support_agent")
	childOf(t, run, start)
	if attr(run, tracing.AttrRunID) != "r1" {
		t.Fatalf("run span attributes %v", run.Attributes)
	}
	var outcomes []string
	for _, name := range []string{"durable.step classify_request", "durable.step draft_reply", "durable.step finalize_reply"} {
		for _, s := range spans[name] {
			childOf(t, s, run)
			outcomes = append(outcomes, attr(s, tracing.AttrNode)+"="+attr(s, tracing.AttrOutcome))
			if attr(s, tracing.AttrRunID) != "r1" || attr(s, tracing.AttrStep) == "" || attr(s, tracing.AttrGraph) != "support_agent" {
				t.Fatalf("step span attributes %v", s.Attributes)
			}
		}
	}
	// Worker 1: classify waits. Worker 2: the event is applied, then draft and finalize.
	want := "classify_request=waiting,classify_request=event_applied,draft_reply=step_committed,finalize_reply=completed"
	if got := strings.Join(outcomes, ","); got != want {
		t.Fatalf("step outcomes %s, want %s", got, want)
	}
	// The event's request is a trace of its own; the run's steps after it stayed in the run's.
	eventReq := one(t, spans, "POST /api/runs/r1/events/approval")
	if eventReq.SpanContext.TraceID() == run.SpanContext.TraceID() {
		t.Fatal("the event request joined the run's trace; want its own")
	}
}
