package runsclient_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// pipelineInput is data_pipeline's start input.
type pipelineInput struct {
	SourceURL string `json:"source_url"`
}

// supportInput is support_agent's start input.
type supportInput struct {
	UserMessage string `json:"user_message"`
}

// approval is support_agent's approval event.
type approval struct {
	Approved bool   `json:"approved"`
	Reviewer string `json:"reviewer"`
}

func TestClient_StartAndWaitForCompletion_RealServer(t *testing.T) {
	c := serveMemory(t).client(t)
	ctx := t.Context()
	started, err := runsclient.Start(ctx, c, "data_pipeline", pipelineInput{SourceURL: "https://example.com/data"}, &runsclient.StartOptions{InstanceID: "p-1"})
	if err != nil {
		t.Fatal(err)
	}
	if started.ID != "p-1" || !strings.HasSuffix(started.StatusURL, "/api/runs/p-1") {
		t.Fatalf("started %+v", started)
	}
	st, err := c.WaitForCompletion(ctx, started.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Result()
	if err != nil || st.RuntimeStatus != runsclient.StatusCompleted || res.FinalNode != "load" || res.GraphName != "data_pipeline" {
		t.Fatalf("status %+v, result %+v, %v", st, res, err)
	}
	var state map[string]any
	if state, err = runsclient.FinalState[map[string]any](st); err != nil || state["source_url"] != "https://example.com/data" {
		t.Fatalf("final state %v, %v", state, err)
	}
}

func TestClient_SupportAgent_FeedStatusEventResume_RealServer(t *testing.T) {
	c := serveMemory(t).client(t)
	ctx := t.Context()
	in := supportInput{UserMessage: "I want a refund for invoice 42"}
	if _, err := runsclient.Start(ctx, c, "support_agent", in, &runsclient.StartOptions{InstanceID: "sa-1"}); err != nil {
		t.Fatal(err)
	}
	// Follow from the start to the wait: the state is known at every row.
	var cursor string
	var last int64
	for ev, err := range runsclient.Follow[examples.SupportState](ctx, c, "sa-1", runsclient.FeedOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Seq <= last || ev.State == nil || ev.State.UserMessage != in.UserMessage {
			t.Fatalf("event %+v after seq %d: want increasing seqs, each with the state", ev.FeedEvent, last)
		}
		last = ev.Seq
		if ev.Type == runsclient.TypeWaitStarted {
			w, err := runsclient.DataOf[runsclient.WaitStarted](ev.Event)
			if err != nil || w.EventName != "approval" || w.ResumeNode != "draft_reply" || w.Deadline != nil {
				t.Fatalf("wait %+v, %v", w, err)
			}
			if !ev.State.NeedsHuman {
				t.Fatalf("state at the wait %+v: want needs_human", ev.State)
			}
			cursor = ev.Cursor
			break
		}
	}
	if cursor == "" {
		t.Fatal("the feed never reached wait_started")
	}
	st, err := c.Status(ctx, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	if st.RuntimeStatus != runsclient.StatusRunning || st.Progress == nil || st.Progress.WaitingForEvent != "approval" || st.Input.GraphName != "support_agent" {
		t.Fatalf("status %+v progress %+v: want Running, waiting for approval", st, st.Progress)
	}
	if err := c.SendEvent(ctx, "sa-1", "approval", approval{Approved: true, Reviewer: "ops@example.com"}, nil); err != nil {
		t.Fatal(err)
	}
	// Resume after the wait: only newer rows, in order, then the end.
	var types []string
	var end runsclient.FeedEvent
	for ev, err := range c.Feed(ctx, "sa-1", runsclient.FeedOptions{Cursor: cursor}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.End {
			end = ev
			continue
		}
		if ev.Seq <= last {
			t.Fatalf("resumed feed gave seq %d after %d", ev.Seq, last)
		}
		last = ev.Seq
		types = append(types, ev.Type)
	}
	if !end.End || end.Status != runsclient.StatusCompleted || !slices.Contains(types, "event_applied") || types[len(types)-1] != "run_completed" {
		t.Fatalf("resumed feed: %v, end %+v", types, end)
	}
	final, err := c.Status(ctx, "sa-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := runsclient.FinalState[examples.SupportState](final)
	if err != nil || got.Approved == nil || !*got.Approved || got.Reviewer == nil || *got.Reviewer != "ops@example.com" {
		t.Fatalf("final state %+v, %v", got, err)
	}
}

func TestClient_Errors_TypedWithTheBodysFields_RealServer(t *testing.T) {
	s := serveMemory(t)
	c := s.client(t)
	ctx := t.Context()

	_, err := c.Status(ctx, "nope")
	var apiErr *runsclient.Error
	if !errors.Is(err, runsclient.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Message != "instance not found" {
		t.Fatalf("status of an unknown run: %v", err)
	}

	_, err = runsclient.Start(ctx, c, "support_agent", map[string]any{"needs_human": true}, nil)
	var details []map[string]any
	if !errors.Is(err, runsclient.ErrBadRequest) || !errors.As(err, &apiErr) || apiErr.Message != "invalid initial state" || !apiErr.Field("details", &details) || len(details) != 1 {
		t.Fatalf("a start without the required field: %v (details %v)", err, details)
	}

	if _, err := runsclient.Start(ctx, c, "support_agent", supportInput{UserMessage: "refund please"}, &runsclient.StartOptions{InstanceID: "dup"}); err != nil {
		t.Fatal(err)
	}
	_, err = runsclient.Start(ctx, c, "support_agent", supportInput{UserMessage: "refund please"}, &runsclient.StartOptions{InstanceID: "dup"})
	var id string
	if !errors.Is(err, runsclient.ErrConflict) || !errors.As(err, &apiErr) || !apiErr.Field("instance_id", &id) || id != "dup" || apiErr.RuntimeStatus().Finished() {
		t.Fatalf("a second start of an unfinished run: %v", err)
	}

	if _, err := c.StartRun(ctx, "no_such_graph", nil, nil); !errors.Is(err, runsclient.ErrNotFound) || !strings.Contains(err.Error(), "unknown graph 'no_such_graph'") {
		t.Fatalf("start of an unknown graph: %v", err)
	}

	const wrong = "wrong-key-c0ffee"
	bad, err := runsclient.New(s.url, runsclient.WithFunctionKey(wrong))
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Status(ctx, "dup")
	if !errors.Is(err, runsclient.ErrUnauthorized) || strings.Contains(err.Error(), wrong) {
		t.Fatalf("a wrong key: %v", err)
	}
	for _, e := range []error{err, apiErr} {
		if strings.Contains(fmt.Sprintf("%v %+v %#v", e, e, e), testKey) {
			t.Fatalf("the key shows in an error: %#v", e)
		}
	}
}

func TestClient_ListPagesAndAll_Filters_RealServer(t *testing.T) {
	c := serveMemory(t).client(t)
	ctx := t.Context()
	for i := range 3 {
		id := fmt.Sprintf("list-%d", i)
		if _, err := runsclient.Start(ctx, c, "data_pipeline", pipelineInput{SourceURL: "https://example.com/" + id}, &runsclient.StartOptions{InstanceID: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitForCompletion(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := runsclient.Start(ctx, c, "support_agent", supportInput{UserMessage: "refund"}, &runsclient.StartOptions{InstanceID: "other"}); err != nil {
		t.Fatal(err)
	}
	var pages int
	var ids []string
	for p, err := range c.ListPages(ctx, runsclient.ListOptions{GraphName: "data_pipeline", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range p.Runs {
			if r.GraphName != "data_pipeline" || r.RuntimeStatus != runsclient.StatusCompleted || r.CreatedAt.IsZero() {
				t.Fatalf("listed %+v", r)
			}
			ids = append(ids, r.InstanceID)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"list-0", "list-1", "list-2"}) || pages < 3 {
		t.Fatalf("pages %d, ids %v", pages, ids)
	}
	var all []string
	for r, err := range c.ListAll(ctx, runsclient.ListOptions{Status: runsclient.StatusCompleted, Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r.InstanceID)
	}
	if len(all) != 3 || slices.Contains(all, "other") {
		t.Fatalf("completed runs %v", all)
	}
	_, err := c.List(ctx, runsclient.ListOptions{ContinuationToken: "forged"})
	if !errors.Is(err, runsclient.ErrBadRequest) || !strings.Contains(err.Error(), "continuation_token") {
		t.Fatalf("a forged token: %v", err)
	}
}

func TestClient_HistoryCancelPurge_RealServer(t *testing.T) {
	c := serveMemory(t).client(t)
	ctx := t.Context()
	if _, err := runsclient.Start(ctx, c, "support_agent", supportInput{UserMessage: "refund"}, &runsclient.StartOptions{InstanceID: "h-1"}); err != nil {
		t.Fatal(err)
	}
	for ev, err := range c.Feed(ctx, "h-1", runsclient.FeedOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "wait_started" {
			break
		}
	}
	if err := c.Purge(ctx, "h-1"); !errors.Is(err, runsclient.ErrConflict) {
		t.Fatalf("purge of a running run: %v", err)
	}
	if err := c.Cancel(ctx, "h-1", "no longer needed"); err != nil {
		t.Fatal(err)
	}
	st, err := c.WaitForCompletion(ctx, "h-1")
	if err != nil || st.RuntimeStatus != runsclient.StatusTerminated || !strings.Contains(string(st.Output), "no longer needed") {
		t.Fatalf("cancelled run: %+v, %v", st, err)
	}
	if _, err := st.Result(); err == nil {
		t.Fatal("Result of a Terminated run: want an error")
	}
	whole, err := c.History(ctx, "h-1", runsclient.HistoryOptions{Limit: 1000})
	if err != nil || whole.ContinuationToken != "" {
		t.Fatal(whole, err)
	}
	var paged []runsclient.Event
	for ev, err := range c.HistoryAll(ctx, "h-1", runsclient.HistoryOptions{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ev)
	}
	if len(paged) != len(whole.Events) || len(paged) < 4 || paged[0].Type != "run_started" || paged[len(paged)-1].Type != "run_terminated" {
		t.Fatalf("history by pages of 2: %+v\nwhole: %+v", paged, whole.Events)
	}
	for i := range paged {
		if paged[i].Seq != whole.Events[i].Seq || paged[i].Type != whole.Events[i].Type {
			t.Fatalf("row %d: %+v vs %+v", i, paged[i], whole.Events[i])
		}
	}
	if err := c.SendEvent(ctx, "h-1", "approval", approval{Approved: true}, nil); !errors.Is(err, runsclient.ErrConflict) {
		t.Fatalf("event to a finished run: %v", err)
	}
	if err := c.Purge(ctx, "h-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Status(ctx, "h-1"); !errors.Is(err, runsclient.ErrNotFound) {
		t.Fatalf("status after purge: %v", err)
	}
}

// TestClient_FeedOnBothTransports_EveryItemOnce: under `serve` the feed is one stream; under
// the Functions host each answer is a long poll that ends, and the client reconnects with its
// cursor: either way a support_agent run is followed to its wait and, after the approval, to
// its end, every history row once and in order, as the history has them.
func TestClient_FeedOnBothTransports_EveryItemOnce(t *testing.T) {
	for _, tr := range serveTransports(t) {
		t.Run(tr.Name, func(t *testing.T) {
			c, err := runsclient.New(tr.BaseURL, runsclient.WithFunctionKey(tr.FunctionKey))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			id := "both-" + tr.Name
			if _, err := runsclient.Start(ctx, c, "support_agent", supportInput{UserMessage: "refund for invoice 9"}, &runsclient.StartOptions{InstanceID: id}); err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			var cursor string
			for ev, err := range c.Feed(ctx, id, runsclient.FeedOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, ev.Seq)
				if ev.Type == "wait_started" {
					cursor = ev.Cursor
					break
				}
			}
			if err := c.SendEvent(ctx, id, "approval", approval{Approved: true, Reviewer: "ops@example.com"}, nil); err != nil {
				t.Fatal(err)
			}
			for ev, err := range c.Feed(ctx, id, runsclient.FeedOptions{Cursor: cursor}) {
				if err != nil {
					t.Fatal(err)
				}
				if !ev.End {
					seqs = append(seqs, ev.Seq)
				}
			}
			var hist []int64
			for ev, err := range c.HistoryAll(ctx, id, runsclient.HistoryOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				hist = append(hist, ev.Seq)
			}
			if !slices.Equal(seqs, hist) {
				t.Fatalf("the feed gave %v, the history has %v", seqs, hist)
			}
			st, err := c.WaitForCompletion(ctx, id)
			if err != nil || st.RuntimeStatus != runsclient.StatusCompleted {
				t.Fatalf("status %+v, %v", st, err)
			}
		})
	}
}
