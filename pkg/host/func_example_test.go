package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
)

type Question struct {
	Text string `json:"text"`
}

type Answer struct {
	Reply string `json:"reply"`
}

func ExampleFunc() {
	app, _ := host.New(host.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ask := host.Func[Question, Answer](func(_ context.Context, q Question) (Answer, error) {
		if q.Text == "" {
			return Answer{}, &host.ClientError{Status: http.StatusBadRequest, Message: "Ask something"}
		}
		return Answer{Reply: "you asked: " + q.Text}, nil
	})
	_ = app.Register(ask, "ask", host.RegisterOptions{})
	srv := app.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{Master: "k"}})
	fmt.Println(post(srv, "/api/graphs/ask/invoke", `{"input":{"text":"why?"}}`))
	fmt.Println(post(srv, "/api/graphs/ask/invoke", `{"input":{}}`))
	fmt.Println(post(srv, "/api/graphs/ask/invoke", `{"input":{"text":1}}`))
	// Output:
	// 200 {"output":{"reply":"you asked: why?"}}
	// 400 {"error":"error","detail":"Ask something"}
	// 422 {"error":"error","detail":"Validation error: input.text: Input should be a valid string, got number"}
}

func ExampleRequestFrom() {
	threadOf := host.Func[struct{}, Answer](func(ctx context.Context, _ struct{}) (Answer, error) {
		req, _ := host.RequestFrom(ctx)
		return Answer{Reply: "thread " + req.Config.ThreadID}, nil
	})
	out, _ := threadOf.Invoke(context.Background(), host.Request{Config: host.Config{ThreadID: "t1"}})
	fmt.Println(out.(Answer).Reply)
	// Output: thread t1
}

func ExampleStreamFunc() {
	app, _ := host.New(host.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	type Progress struct {
		Step string `json:"step"`
	}
	ask := host.StreamFunc[Question, Progress](func(_ context.Context, q Question, emit func(Progress) error) error {
		if err := emit(Progress{Step: "thinking"}); err != nil {
			return err
		}
		return emit(Progress{Step: "answered " + q.Text})
	})
	_ = app.Register(ask, "ask", host.RegisterOptions{})
	srv := app.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{Master: "k"}})
	fmt.Print(post(srv, "/api/graphs/ask/stream", `{"input":{"text":"why?"}}`))
	fmt.Println(post(srv, "/api/graphs/ask/stream", `{"input":{"text":1}}`))
	// Output:
	// 200 event: data
	// data: {"step": "thinking"}
	//
	// event: data
	// data: {"step": "answered why?"}
	//
	// event: end
	// data: {}
	//
	// 422 {"error":"error","detail":"Validation error: input.text: Input should be a valid string, got number"}
}
