package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Durable graphs as assistants (docs/http-platform.md, "Durable assistants"). A durable
// graph (one run by the event-sourced engine) is an assistant whose graph_id is its name.
// A run on a thread starts, or with command.resume resumes, the thread's durable run and
// waits until it waits for an event or ends. A wait_for_event is an interrupt: the thread
// becomes interrupted, the pending event is the interrupt's value
// ({"event": <name>, "resume_node": <node>, "note": <note>}) in getState().tasks[].interrupts
// and in the stream (__interrupt__), and command.resume delivers its payload as that event.

// DurableAssistants is what the platform routes need of the durable engine to serve durable
// graphs as assistants; package platformruns implements it on the engine.
type DurableAssistants interface {
	// Graphs lists the durable graphs served as assistants.
	Graphs() []host.GraphInfo
	// Run starts thread's durable run of graph on input (Resume nil) or delivers Resume as the
	// event the run waits for, then waits until the run waits for an event or ends. Errors:
	// ErrNoPendingInterrupt for a resume with nothing to resume; an error wrapping
	// ErrInvalidResume for a payload the event rejects.
	Run(ctx context.Context, req DurableRunRequest) (DurableState, error)
	// State returns the thread's durable run's latest state; an error wrapping
	// host.ErrThreadNotFound when the thread has none.
	State(ctx context.Context, threadID string) (DurableState, error)
	// History returns the thread's durable run's states, newest first.
	History(ctx context.Context, threadID string) ([]DurableState, error)
}

// DurableRunRequest is one platform run of a durable assistant.
type DurableRunRequest struct {
	// ThreadID is the run's thread; Graph the durable graph.
	ThreadID, Graph string
	// Input is the initial state of a new run.
	Input json.RawMessage
	// Resume is command.resume: the payload of the awaited event; nil starts a new run.
	Resume json.RawMessage
	// Owner is, under per-user isolation, the thread's owner (the caller's identity when a
	// user runs on their own thread): a new run records it in its metadata under
	// isolation.OwnerKey, as the runs API does, so the owner sees the run there too. ""
	// (isolation off, or a thread without an owner) records none.
	Owner string
}

// DurableState is one state of a thread's durable run.
type DurableState struct {
	// ID names the state (the history row it comes from); Node is the node that produced it.
	ID, Node string
	// Values is the run's state object.
	Values json.RawMessage
	// Interrupt is the pending event when the run waits for one.
	Interrupt *DurableInterrupt
	// Failed is the failure message of a failed or terminated run.
	Failed string
	// At is when the state was recorded.
	At time.Time
}

// DurableInterrupt is a durable run's pending wait_for_event.
type DurableInterrupt struct {
	// ID identifies the wait; Event is the awaited event, ResumeNode where the run goes on,
	// Note the wait's note.
	ID, Event, ResumeNode, Note string
}

// ErrNoPendingInterrupt is a command.resume on a thread whose durable run waits for nothing
// (answered 400).
var ErrNoPendingInterrupt = errors.New("platform: no pending interrupt to resume")

// ErrInvalidResume is a command.resume whose payload the awaited event rejects (400).
var ErrInvalidResume = errors.New("platform: invalid resume payload")

// durableAssistant serves a durable graph through the graph capabilities the routes use.
type durableAssistant struct {
	name string
	d    DurableAssistants
}

// durableGraph returns the durable assistant named name.
func (s *Service) durableGraph(name string) (host.InvocableGraph, bool) {
	if s.durable == nil {
		return nil, false
	}
	for _, g := range s.durable.Graphs() {
		if g.Name == name {
			return &durableAssistant{name: name, d: s.durable}, true
		}
	}
	return nil, false
}

// HasCheckpointer reports true: a durable run keeps its state on its thread.
func (a *durableAssistant) HasCheckpointer() bool { return true }

// run runs or resumes the thread's durable run with do (a.d.Run, or a DurableStreamer's
// RunStream) and records the outcome on ctx.
func (a *durableAssistant) run(ctx context.Context, req host.Request, do func(context.Context, DurableRunRequest) (DurableState, error)) (DurableState, error) {
	if req.Config.ThreadID == "" {
		return DurableState{}, fmt.Errorf("run durable assistant %s: no thread", a.name)
	}
	st, err := do(ctx, DurableRunRequest{ThreadID: req.Config.ThreadID, Graph: a.name, Input: req.Input, Resume: resumeOf(ctx), Owner: ownerOf(ctx)})
	if err != nil {
		if errors.Is(err, ErrNoPendingInterrupt) {
			return st, &host.ClientError{Status: http.StatusBadRequest, Err: err,
				Message: fmt.Sprintf("Cannot resume thread %s: it has no pending interrupt", repr(req.Config.ThreadID))}
		}
		if errors.Is(err, ErrInvalidResume) {
			return st, &host.ClientError{Status: http.StatusBadRequest, Err: err, Message: "Invalid resume payload"}
		}
		return st, fmt.Errorf("run durable assistant %s: %w", a.name, err)
	}
	if o, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		o.interrupted, o.values = st.Interrupt != nil, pyjson.AppendReformat(nil, st.Values)
	}
	if st.Failed != "" {
		return st, fmt.Errorf("durable run of %s failed: %s", a.name, st.Failed)
	}
	return st, nil
}

// DeleteThread implements ThreadDeleter: when the durable assistants are a ThreadDeleter too,
// deleting the thread (or ending a temporary one) ends and removes the thread's durable run.
func (a *durableAssistant) DeleteThread(ctx context.Context, threadID string) error {
	if d, ok := a.d.(ThreadDeleter); ok {
		return d.DeleteThread(ctx, threadID)
	}
	return nil
}

// Invoke runs the durable run to its next interrupt or its end and returns its state, with
// __interrupt__ when interrupted (as runs.wait answers).
func (a *durableAssistant) Invoke(ctx context.Context, req host.Request) (any, error) {
	st, err := a.run(ctx, req, a.d.Run)
	if err != nil {
		return nil, err
	}
	if st.Interrupt == nil {
		return st.Values, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(st.Values, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	list, _ := json.Marshal([]any{interruptWire(st.Interrupt)})
	m["__interrupt__"] = list
	return m, nil
}

// Stream emits the state (values) and, when interrupted, the __interrupt__ chunk.
func (a *durableAssistant) Stream(ctx context.Context, req host.Request, emit func(any) error) error {
	return a.StreamModes(ctx, req, []string{req.StreamMode}, func(_ string, chunk any) error { return emit(chunk) })
}

// StreamModes implements ModeStreamer. With a DurableStreamer the stream follows the run while
// it runs (durable_stream.go). Otherwise values gets the state once the run settles, updates
// {<node>: state}, and both the {"__interrupt__": [...]} chunk when the run is interrupted.
func (a *durableAssistant) StreamModes(ctx context.Context, req host.Request, modes []string, emit func(string, any) error) error {
	if ds, ok := a.d.(DurableStreamer); ok {
		return a.streamLive(ctx, ds, req, modes, emit)
	}
	st, err := a.run(ctx, req, a.d.Run)
	if err != nil {
		return err
	}
	for _, mode := range modes {
		var chunks []any
		switch mode {
		case "values":
			chunks = append(chunks, st.Values)
		case "updates":
			if st.Interrupt == nil {
				chunks = append(chunks, map[string]json.RawMessage{st.Node: st.Values})
			}
		default:
			continue
		}
		if st.Interrupt != nil {
			chunks = append(chunks, map[string]any{"__interrupt__": []any{interruptWire(st.Interrupt)}})
		}
		for _, c := range chunks {
			if err := emit(mode, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// GetState returns the durable run's latest state.
func (a *durableAssistant) GetState(ctx context.Context, threadID string) (host.StateView, error) {
	st, err := a.d.State(ctx, threadID)
	if err != nil {
		return host.StateView{}, err
	}
	return durableView(threadID, st), nil
}

// GetStateHistory returns the durable run's states, newest first.
func (a *durableAssistant) GetStateHistory(ctx context.Context, ref CheckpointRef) ([]host.StateView, error) {
	sts, err := a.d.History(ctx, ref.ThreadID)
	if err != nil {
		return nil, err
	}
	views := make([]host.StateView, 0, len(sts))
	for i, st := range sts {
		if ref.ID != "" && len(views) == 0 && st.ID != ref.ID {
			continue
		}
		v := durableView(ref.ThreadID, st)
		if i+1 < len(sts) {
			v.ParentConfig = checkpointConfig(ref.ThreadID, sts[i+1].ID)
		}
		views = append(views, v)
	}
	return views, nil
}

func durableView(tid string, st DurableState) host.StateView {
	v := host.StateView{Values: st.Values, Next: []string{}, Config: checkpointConfig(tid, st.ID), CreatedAt: st.At,
		Metadata: map[string]any{"source": "loop", "writes": nil, "step": nil}}
	if st.Node != "" {
		v.Metadata["node"] = st.Node
	}
	return v
}

func checkpointConfig(tid, id string) map[string]any {
	return map[string]any{"configurable": map[string]any{"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": id}}
}

// interruptWire is an interrupt as LangGraph sends it.
func interruptWire(in *DurableInterrupt) map[string]any {
	value := map[string]any{"event": in.Event, "resume_node": in.ResumeNode}
	if in.Note != "" {
		value["note"] = in.Note
	}
	return map[string]any{"value": value, "id": in.ID, "when": "during", "resumable": true, "ns": []string{in.ResumeNode + ":" + in.ID}}
}

// durableTasks is the tasks and interrupts of an interrupted durable state.
func durableTasks(in *DurableInterrupt) (tasks, interrupts []any) {
	w := interruptWire(in)
	task := map[string]any{"id": in.ID, "name": in.ResumeNode, "path": []any{"__pregel_pull", in.ResumeNode},
		"error": nil, "interrupts": []any{w}, "checkpoint": nil, "state": nil, "result": nil}
	return []any{task}, []any{w}
}

type outcomeKey struct{}

type resumeKey struct{}

// outcome is what a durable assistant's run tells the route that ran it.
type outcome struct {
	interrupted bool
	values      json.RawMessage
}

// withOutcome returns ctx carrying a fresh outcome.
func withOutcome(ctx context.Context) (context.Context, *outcome) {
	o := &outcome{}
	return context.WithValue(ctx, outcomeKey{}, o), o
}

// status is the thread status of a run that ended with err.
func (o *outcome) status(err error) threads.Status {
	switch {
	case err != nil:
		return threads.StatusError
	case o.interrupted:
		return threads.StatusInterrupted
	}
	return threads.StatusIdle
}

// valuesOr is the durable run's state to keep as the thread's values, or else body.
func (o *outcome) valuesOr(body []byte) json.RawMessage {
	if o.values != nil {
		return o.values
	}
	return body
}

// outcomeValues is the durable run's state recorded on ctx, or nil.
func outcomeValues(ctx context.Context) json.RawMessage {
	if o, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		return o.values
	}
	return nil
}

// withResume carries command.resume to the durable assistant.
func withResume(ctx context.Context, resume json.RawMessage) context.Context {
	if resume == nil {
		return ctx
	}
	return context.WithValue(ctx, resumeKey{}, resume)
}

func resumeOf(ctx context.Context) json.RawMessage {
	v, _ := ctx.Value(resumeKey{}).(json.RawMessage)
	return v
}

type ownerKey struct{}

// withOwner carries the thread's owner (RunRequest.owner) to the durable assistant.
func withOwner(ctx context.Context, owner string) context.Context {
	if owner == "" {
		return ctx
	}
	return context.WithValue(ctx, ownerKey{}, owner)
}

func ownerOf(ctx context.Context) string {
	v, _ := ctx.Value(ownerKey{}).(string)
	return v
}

// durableState answers a durable assistant's thread state: its run's latest state, with
// the pending event as the task's interrupt and the resume node as next.
func (s *Service) durableState(r *http.Request, da *durableAssistant, tid string) (threadStateBody, error) {
	st, err := da.d.State(r.Context(), tid)
	if errors.Is(err, host.ErrThreadNotFound) {
		return emptyState(tid), nil
	}
	if err != nil {
		s.logger.Error("get durable thread state", "thread_id", tid, "error", err)
		return threadStateBody{}, apierror.New(apierror.ErrInternal, "Internal error retrieving thread state")
	}
	ts, err := s.renderState(durableView(tid, st), tid)
	if err != nil || st.Interrupt == nil {
		return ts, err
	}
	ts.Tasks, ts.Interrupts = durableTasks(st.Interrupt)
	ts.Next = []string{st.Interrupt.ResumeNode}
	return ts, nil
}

var (
	_ host.StreamableGraph = (*durableAssistant)(nil)
	_ host.StatefulGraph   = (*durableAssistant)(nil)
	_ host.Checkpointed    = (*durableAssistant)(nil)
	_ StateHistorian       = (*durableAssistant)(nil)
	_ ModeStreamer         = (*durableAssistant)(nil)
)

// withInterrupts fills an interrupted durable assistant's thread's interrupts,
// {<task id>: [<interrupt>]}, as LangGraph's Thread has them. A failed read leaves them empty.
func (s *Service) withInterrupts(r *http.Request, wt threadBody, t threads.Thread) threadBody {
	if t.Status != threads.StatusInterrupted {
		return wt
	}
	g, ok := s.graph(t.AssistantID)
	da, isDurable := g.(*durableAssistant)
	if !ok || !isDurable {
		return wt
	}
	st, err := da.d.State(r.Context(), t.ThreadID)
	if err != nil || st.Interrupt == nil {
		return wt
	}
	wt.Interrupts = map[string]any{st.Interrupt.ID: []any{interruptWire(st.Interrupt)}}
	return wt
}
