package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
)

// upper is a tiny graph: it upper-cases the "text" member of its input.
type upper struct{}

func (upper) Invoke(_ context.Context, req host.Request) (any, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(req.Input, &in); err != nil {
		return nil, err
	}
	return map[string]string{"text": strings.ToUpper(in.Text)}, nil
}

func (g upper) Stream(ctx context.Context, req host.Request, emit func(any) error) error {
	out, err := g.Invoke(ctx, req)
	if err != nil {
		return err
	}
	return emit(out)
}

func post(h http.Handler, path, body string) string {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("x-functions-key", "k")
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return fmt.Sprintf("%d %s", rec.Code, b)
}

func ExampleNew() {
	app, err := host.New(host.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := app.Register(upper{}, "upper", host.RegisterOptions{Description: "Upper-cases text"}); err != nil {
		fmt.Println(err)
		return
	}
	srv := app.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{Master: "k"}})
	fmt.Println(post(srv, "/api/graphs/upper/invoke", `{"input":{"text":"hi"}}`))
	fmt.Print(post(srv, "/api/graphs/upper/stream", `{"input":{"text":"hé"}}`))
	// Output:
	// 200 {"output":{"text":"HI"}}
	// 200 event: data
	// data: {"text": "H\u00c9"}
	//
	// event: end
	// data: {}
}

func ExampleGraphHostApp_Register() {
	app, _ := host.New(host.Options{})
	fmt.Println(app.Register(upper{}, "upper", host.RegisterOptions{NoStream: true}))
	fmt.Println(app.Register(upper{}, "UPPER", host.RegisterOptions{}))
	fmt.Println(app.Register(nil, "x", host.RegisterOptions{}))
	for _, fn := range app.FunctionApp().HTTPFunctions() {
		fmt.Println(fn.Name, fn.Route)
	}
	// Output:
	// <nil>
	// Graph 'UPPER' is already registered
	// Graph must have an invoke() method. Got <nil>
	// fg_health health
	// fg_health_details health/details
	// fg_openapi openapi.json
	// fg_upper_invoke graphs/upper/invoke
}

func ExampleNewLoggingObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case "time", "run_id", "started_at_ns", "ended_at_ns", "duration_ms", "invocation_id":
				return slog.Attr{}
			}
			return a
		},
	}))
	obs := host.NewLoggingObserver(logger)
	obs.OnRunRejected(context.Background(), host.RunContext{GraphName: "upper", Endpoint: host.EndpointInvoke, Transport: "buffered",
		LockBackend: "InProcessThreadLock"}, host.ReasonInvalidRequest)
	// Output:
	// level=INFO msg=langgraph.run.rejected graph_name=upper endpoint=invoke thread_id=<nil> assistant_id=<nil> stream_mode=<nil> transport=buffered has_checkpointer=false lock_backend=InProcessThreadLock trigger_type=<nil> status=rejected reason=invalid_request
}

func ExampleValidateThreadID() {
	fmt.Println(host.ValidateThreadID("t1"))
	fmt.Println(host.ValidateThreadID("t1\n"))
	// Output:
	// <nil>
	// Thread ID must contain only printable ASCII characters
}

func ExampleGraphHostApp_AddHealthDetails() {
	app, _ := host.New(host.Options{HealthDetailsAuthLevel: funchost.AuthAnonymous})
	_ = app.AddHealthDetails("durable_graphs", func() any { return []string{"support_agent"} })
	rec := httptest.NewRecorder()
	app.FunctionApp().Standalone(funchost.StandaloneOptions{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/health/details", nil))
	fmt.Println(rec.Body.String())
	// Output:
	// {"status":"ok","funcgraph_version":"0.4.0","graphs":[],"durable_graphs":["support_agent"]}
}
