package runsclient_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// exampleApp serves the example graphs' runs API in memory with the function key "k", as
// `make run` serves it at http://127.0.0.1:7071/api, and returns its base URL.
func exampleApp() (string, func()) {
	reg := durable.NewRegistry()
	graphs, _ := examples.All()
	for _, g := range graphs {
		_ = reg.Register(g)
	}
	eng, _ := engine.New(engine.Options{Registry: reg, Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(),
		Logger: slog.New(slog.DiscardHandler)})
	_ = eng.Start(context.Background())
	svc, _ := runsapi.NewService(runsapi.Options{Runs: eng, Registry: reg, AuthLevel: funchost.AuthFunction, Logger: slog.New(slog.DiscardHandler)})
	app, _ := svc.FunctionApp()
	srv := httptest.NewServer(app.Standalone(funchost.StandaloneOptions{
		Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}, Logger: slog.New(slog.DiscardHandler)}))
	return srv.URL + "/api", func() { srv.Close(); _ = eng.Close() }
}

// Ticket is support_agent's start input.
type Ticket struct {
	UserMessage string `json:"user_message"`
}

// Approval is support_agent's approval event.
type Approval struct {
	Approved bool   `json:"approved"`
	Reviewer string `json:"reviewer"`
}

func ExampleNew() {
	base, stop := exampleApp()
	defer stop()

	c, err := runsclient.New(base, runsclient.WithFunctionKey("k"),
		runsclient.WithRetry(runsclient.Retry{MaxAttempts: 3, MaxDelay: 10 * time.Second}))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.Status(context.Background(), "no-such-run")
	fmt.Println(errors.Is(err, runsclient.ErrNotFound), err)
	// Output: true runsclient: GET /api/runs/no-such-run: 404 instance not found
}

func ExampleStart() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	started, err := runsclient.Start(ctx, c, "support_agent", Ticket{UserMessage: "How do I reset my password?"},
		&runsclient.StartOptions{InstanceID: "ticket-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	status, err := c.WaitForCompletion(ctx, started.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	final, _ := runsclient.FinalState[examples.SupportState](status)
	fmt.Println(status.RuntimeStatus, *final.FinalResponse != "")
	// Output: Completed true
}

func ExampleClient_SendEvent() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	_, _ = runsclient.Start(ctx, c, "support_agent", Ticket{UserMessage: "I want a refund for invoice 42"}, &runsclient.StartOptions{InstanceID: "r1"})
	for ev, err := range c.Feed(ctx, "r1", runsclient.FeedOptions{}) {
		if err != nil || ev.Type == "wait_started" {
			break // the run waits for its approval
		}
	}
	err := c.SendEvent(ctx, "r1", "approval", Approval{Approved: true, Reviewer: "ops@example.com"},
		&runsclient.EventOptions{IdempotencyKey: "approval-r1"})
	fmt.Println(err)
	status, _ := c.WaitForCompletion(ctx, "r1")
	final, _ := runsclient.FinalState[examples.SupportState](status)
	fmt.Println(status.RuntimeStatus, *final.Reviewer)
	// Output:
	// <nil>
	// Completed ops@example.com
}

func ExampleFollow() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	_, _ = runsclient.Start(ctx, c, "support_agent", Ticket{UserMessage: "I want a refund for invoice 42"}, &runsclient.StartOptions{InstanceID: "r2"})
	var cursor string
	for ev, err := range runsclient.Follow[examples.SupportState](ctx, c, "r2", runsclient.FeedOptions{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.Seq, ev.Type, ev.Node, "needs_human:", ev.State.NeedsHuman)
		if ev.Type == "wait_started" {
			cursor = ev.Cursor // resume here later, from any process
			break
		}
	}
	_ = c.SendEvent(ctx, "r2", "approval", Approval{Approved: true, Reviewer: "ops@example.com"}, nil)
	for ev, err := range c.Feed(ctx, "r2", runsclient.FeedOptions{Cursor: cursor}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.End {
			fmt.Println("end:", ev.Status)
		}
	}
	// Output:
	// 1 run_started classify_request needs_human: false
	// 2 node_completed classify_request needs_human: true
	// 3 route_resolved classify_request needs_human: true
	// 4 wait_started classify_request needs_human: true
	// end: Completed
}

func ExampleClient_ListAll() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	for _, id := range []string{"a", "b", "c"} {
		_, _ = runsclient.Start(ctx, c, "data_pipeline", map[string]string{"source_url": "https://example.com/" + id}, &runsclient.StartOptions{InstanceID: id})
		_, _ = c.WaitForCompletion(ctx, id)
	}
	n := 0
	for run, err := range c.ListAll(ctx, runsclient.ListOptions{GraphName: "data_pipeline", Status: runsclient.StatusCompleted, Limit: 2}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
		_ = run.InstanceID
	}
	fmt.Println(n, "completed runs")
	// Output: 3 completed runs
}

// After an outage of the model endpoint, rewind every run that failed in it, a page per call.
func ExampleClient_RewindAll() {
	c, _ := runsclient.New("http://127.0.0.1:7071/api", runsclient.WithFunctionKey("dev-function-key"))
	ctx := context.Background()
	outage := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	for page, err := range c.RewindAll(ctx, runsclient.RewindFilter{GraphName: "support_agent", FailedAfter: outage, Reason: "model endpoint is back"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("rewound", page.Rewound)
	}
}

// One failed run, from the step that failed.
func ExampleClient_Rewind() {
	c, _ := runsclient.New("http://127.0.0.1:7071/api", runsclient.WithFunctionKey("dev-function-key"))
	status, err := c.Rewind(context.Background(), "r1", "model endpoint is back")
	var apiErr *runsclient.Error
	if errors.As(err, &apiErr) && errors.Is(err, runsclient.ErrConflict) {
		fmt.Println("not Failed:", apiErr.RuntimeStatus())
		return
	}
	fmt.Println(status, err)
}

// The state of a run waiting for its approval, typed.
func ExampleStateOf() {
	c, _ := runsclient.New("http://127.0.0.1:7071/api", runsclient.WithFunctionKey("dev-function-key"))
	state, at, err := runsclient.StateOf[examples.SupportState](context.Background(), c, "r1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(state.NeedsHuman, at.At.WaitingFor, at.Step)
}

// Runs listed by a business key (a search key the graph declares or the start gave).
func ExampleClient_List() {
	c, _ := runsclient.New("http://127.0.0.1:7071/api", runsclient.WithFunctionKey("dev-function-key"))
	page, err := c.List(context.Background(), runsclient.ListOptions{GraphName: "support_agent", Keys: map[string]string{"ticket_id": "T-42"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, run := range page.Runs {
		fmt.Println(run.InstanceID, run.RuntimeStatus)
	}
}

// Polling the status, every Retry-After of the start, for an app that does not serve the feed.
func ExampleClient_PollForCompletion() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	started, _ := runsclient.Start(ctx, c, "data_pipeline", map[string]string{"source_url": "https://example.com/data"}, nil)
	status, err := c.PollForCompletion(ctx, started.ID, 10*time.Millisecond) // started.RetryAfter is the app's 10 s
	if err != nil {
		fmt.Println(err)
		return
	}
	result, _ := status.Result()
	fmt.Println(status.RuntimeStatus, result.FinalNode, started.RetryAfter)
	// Output: Completed load 10s
}

// A start the graph's state refuses: the error carries the body's details.
func ExampleClient_StartRun() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))

	_, err := c.StartRun(context.Background(), "support_agent", map[string]any{"user_msg": "typo"}, nil)
	var apiErr *runsclient.Error
	if errors.As(err, &apiErr) && errors.Is(err, runsclient.ErrBadRequest) {
		var details []struct {
			Loc []string `json:"loc"`
			Msg string   `json:"msg"`
		}
		apiErr.Field("details", &details)
		fmt.Println(apiErr.StatusCode, apiErr.Message, details[0].Loc, details[0].Msg)
	}
	// Output: 400 invalid initial state [user_message] field required
}

func ExampleClient_Cancel() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	_, _ = runsclient.Start(ctx, c, "support_agent", Ticket{UserMessage: "I want a refund"}, &runsclient.StartOptions{InstanceID: "r3"})
	fmt.Println(c.Cancel(ctx, "r3", "customer withdrew the request"))
	status, _ := c.WaitForCompletion(ctx, "r3")
	fmt.Println(status.RuntimeStatus, string(status.Output))
	fmt.Println(c.Purge(ctx, "r3"))
	_, err := c.Status(ctx, "r3")
	fmt.Println(errors.Is(err, runsclient.ErrNotFound))
	// Output:
	// <nil>
	// Terminated "customer withdrew the request"
	// <nil>
	// true
}

func ExampleClient_HistoryAll() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	_, _ = runsclient.Start(ctx, c, "data_pipeline", map[string]string{"source_url": "https://example.com/data"}, &runsclient.StartOptions{InstanceID: "p1"})
	_, _ = c.WaitForCompletion(ctx, "p1")
	for ev, err := range c.HistoryAll(ctx, "p1", runsclient.HistoryOptions{Limit: 2}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.Seq, ev.Type, ev.Node)
	}
	// Output:
	// 1 run_started extract
	// 2 node_completed extract
	// 3 route_resolved extract
	// 4 node_completed transform
	// 5 route_resolved transform
	// 6 node_completed load
	// 7 route_resolved load
	// 8 run_completed load
}

// The events research_agent's search branches emit, and its bounded wait, typed.
func ExampleDataOf() {
	base, stop := exampleApp()
	defer stop()
	c, _ := runsclient.New(base, runsclient.WithFunctionKey("k"))
	ctx := context.Background()

	_, _ = runsclient.Start(ctx, c, "research_agent", map[string]any{"question": "Is Go fast?", "sources": []string{"arxiv"}}, &runsclient.StartOptions{InstanceID: "ra"})
	for ev, err := range c.Feed(ctx, "ra", runsclient.FeedOptions{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Type {
		case runsclient.TypeCustom:
			custom, _ := runsclient.DataOf[runsclient.Custom](ev.Event)
			fmt.Println("emitted", custom.Name, string(custom.Data))
		case runsclient.TypeWaitStarted:
			wait, _ := runsclient.DataOf[runsclient.WaitStarted](ev.Event)
			fmt.Println("waits for", wait.EventName, "until its deadline, then", wait.TimeoutNode, wait.Deadline != nil)
			return
		}
	}
	// Output:
	// emitted searched {"attempt": 1, "source": "arxiv"}
	// waits for approval until its deadline, then escalate true
}
