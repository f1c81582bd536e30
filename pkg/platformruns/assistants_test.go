package platformruns_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/platformruns"
)

// assistantsOn starts an engine running support_agent on st and returns its assistants and a
// function that stops the engine (a process that ends).
func assistantsOn(t *testing.T, st storage) (*platformruns.Assistants, func()) {
	t.Helper()
	reg := durable.NewRegistry()
	if err := reg.Register(examples.MustSupportAgent()); err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Options{Registry: reg, Store: st.store, Queue: st.queue, Payloads: st.blobs, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = e.Close() }
	t.Cleanup(stop)
	return platformruns.NewAssistants(e, append(reg.Public(), reg.Public()...)), stop
}

// TestAssistants_ResumeAfterRestart interrupts a run on one engine and resumes it on another
// over the same storage: the binding of thread to run is the derived instance id.
func TestAssistants_ResumeAfterRestart(t *testing.T) {
	st := newStorage()
	a, stop := assistantsOn(t, st)
	if g := a.Graphs(); len(g) != 1 || g[0].Name != "support_agent" || !g[0].HasCheckpointer {
		t.Fatalf("graphs %+v", g)
	}
	ctx := t.Context()
	run := platform.DurableRunRequest{ThreadID: "th", Graph: "support_agent", Input: json.RawMessage(`{"user_message":"legal advice"}`)}
	s, err := a.Run(ctx, run)
	if err != nil || s.Interrupt == nil || s.Interrupt.Event != "approval" || s.Interrupt.ID == "" {
		t.Fatalf("run: %+v %v", s, err)
	}
	if _, err := a.Run(ctx, run); !strings.Contains(err.Error(), "resume it with command.resume") {
		t.Fatalf("second start: %v", err)
	} else if status, _, ok := host.ClientStatus(err); !ok || status != http.StatusConflict {
		t.Fatalf("second start status %d %v", status, ok)
	}
	stop()

	b, _ := assistantsOn(t, st)
	got, err := b.State(ctx, "th")
	if err != nil || got.Interrupt == nil || got.Interrupt.ID != s.Interrupt.ID {
		t.Fatalf("state after restart: %+v %v", got, err)
	}
	s, err = b.Run(ctx, platform.DurableRunRequest{ThreadID: "th", Graph: "support_agent", Resume: json.RawMessage(`{"approved":true,"reviewer":"r"}`)})
	if err != nil || s.Interrupt != nil || !strings.Contains(string(s.Values), `"final_response":"Thanks for reaching out. We have prepared a response for your request. Reviewer: r."`) {
		t.Fatalf("resume: %+v %s %v", s, s.Values, err)
	}
	if _, err := b.Run(ctx, platform.DurableRunRequest{ThreadID: "th", Graph: "support_agent", Resume: json.RawMessage(`{}`)}); !errors.Is(err, platform.ErrNoPendingInterrupt) {
		t.Fatalf("resume of a finished run: %v", err)
	}
	if _, err := b.Run(ctx, platform.DurableRunRequest{ThreadID: "none", Graph: "support_agent", Resume: json.RawMessage(`{}`)}); !errors.Is(err, platform.ErrNoPendingInterrupt) {
		t.Fatalf("resume without a run: %v", err)
	}
	if _, err := b.State(ctx, "none"); !errors.Is(err, host.ErrThreadNotFound) {
		t.Fatalf("state without a run: %v", err)
	}
	hist, err := b.History(ctx, "th")
	if err != nil || len(hist) < 4 || hist[0].Node != "finalize_reply" || hist[len(hist)-1].Node != "classify_request" {
		t.Fatalf("history: %+v %v", hist, err)
	}
	if id := platformruns.InstanceID(strings.Repeat("x", 300)); !engine.ValidInstanceID(id) || !strings.HasPrefix(id, "thread~") {
		t.Fatalf("hashed instance id %q", id)
	}
}

type gateState struct {
	OK bool `json:"ok"`
}

type gatePayload struct {
	OK bool `json:"ok"`
}

// TestAssistants_ResumeWithARefusedPayload_IsInvalidResume: a resume payload that the awaited
// event's typed handler refuses is the client's error (platform.ErrInvalidResume, a 400), and
// the run still waits for a good one.
func TestAssistants_ResumeWithARefusedPayload_IsInvalidResume(t *testing.T) {
	b := durable.NewManifestBuilder[gateState]("gate")
	b.SetEntrypoint("ask")
	_ = b.AddStep("ask", func(_ context.Context, s gateState) (gateState, error) { return s, nil },
		durable.WithDecide(func(_ context.Context, s gateState) (durable.RouteDecision, error) {
			if !s.OK {
				return durable.WaitForEvent("answer", "done"), nil
			}
			return durable.Next("done"), nil
		}))
	_ = b.AddStep("done", func(_ context.Context, s gateState) (gateState, error) { return s, nil }, durable.Terminal())
	_ = durable.OnEvent(b, "answer", func(_ context.Context, s gateState, p gatePayload) (gateState, error) { s.OK = p.OK; return s, nil })
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	_, a := graphAssistants(t, g)
	ctx := t.Context()
	s, err := a.Run(ctx, platform.DurableRunRequest{ThreadID: "g1", Graph: "gate", Input: json.RawMessage(`{}`)})
	if err != nil || s.Interrupt == nil || s.Interrupt.Event != "answer" {
		t.Fatalf("run: %+v %v", s, err)
	}
	_, err = a.Run(ctx, platform.DurableRunRequest{ThreadID: "g1", Graph: "gate", Resume: json.RawMessage(`{"ok":"yes"}`)})
	if !errors.Is(err, platform.ErrInvalidResume) {
		t.Fatalf("resume with a string for a bool: %v, want ErrInvalidResume", err)
	}
	s, err = a.Run(ctx, platform.DurableRunRequest{ThreadID: "g1", Graph: "gate", Resume: json.RawMessage(`{"ok":true}`)})
	if err != nil || s.Interrupt != nil || !strings.Contains(string(s.Values), `"ok":true`) {
		t.Fatalf("good resume: %+v %s %v", s, s.Values, err)
	}
}

// TestAssistants_DeleteThread_EndsAndPurgesTheDurableRun: deleting a thread whose durable run
// waits for an event terminates and purges that run; a finished run is purged; a thread without
// a run is no error. The thread can then start afresh.
func TestAssistants_DeleteThread_EndsAndPurgesTheDurableRun(t *testing.T) {
	st := newStorage()
	a, _ := assistantsOn(t, st)
	ctx := t.Context()
	start := platform.DurableRunRequest{ThreadID: "del", Graph: "support_agent", Input: json.RawMessage(`{"user_message":"legal advice"}`)}
	if s, err := a.Run(ctx, start); err != nil || s.Interrupt == nil {
		t.Fatalf("run: %+v %v", s, err)
	}
	if err := a.DeleteThread(ctx, "del"); err != nil {
		t.Fatalf("delete a waiting thread: %v", err)
	}
	if _, err := a.State(ctx, "del"); !errors.Is(err, host.ErrThreadNotFound) {
		t.Fatalf("state after delete: %v, want the run gone", err)
	}
	if s, err := a.Run(ctx, start); err != nil || s.Interrupt == nil {
		t.Fatalf("run again after delete: %+v %v", s, err)
	}
	if _, err := a.Run(ctx, platform.DurableRunRequest{ThreadID: "del", Graph: "support_agent", Resume: json.RawMessage(`{"approved":true,"reviewer":"r"}`)}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := a.DeleteThread(ctx, "del"); err != nil {
		t.Fatalf("delete a finished thread: %v", err)
	}
	if _, err := a.State(ctx, "del"); !errors.Is(err, host.ErrThreadNotFound) {
		t.Fatalf("state after deleting a finished run: %v", err)
	}
	if err := a.DeleteThread(ctx, "never"); err != nil {
		t.Fatalf("delete a thread without a run: %v", err)
	}
}

// graphAssistants returns a started engine over memory storage whose registry holds g alone, and
// the durable assistants of that registry.
func graphAssistants(t *testing.T, g durable.Graph) (*engine.Engine, *platformruns.Assistants) {
	t.Helper()
	reg := durable.NewRegistry()
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	st := newStorage()
	e, err := engine.New(engine.Options{Registry: reg, Store: st.store, Queue: st.queue, Payloads: st.blobs, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, platformruns.NewAssistants(e, reg.Public())
}
