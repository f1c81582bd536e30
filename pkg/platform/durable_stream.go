package platform

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/host"
)

// Live streams of durable assistants (docs/http-platform.md, "Durable assistants"). When the
// DurableAssistants are a DurableStreamer too, a run's stream follows the run while it runs:
//
//   - values: the run's state after each step commits (a node, an applied event, a fan-out's
//     join), and the final state if it was not the last one sent;
//   - updates: {<node>: <what the step wrote>} after each node, applied event and branch (a
//     branch's result, in the order the branches show in history);
//   - messages-tuple (and messages): each chunk named durable.MessagesChunk as it is written,
//     as [<message chunk>, <metadata>] (durableMessage, durableMetadata);
//   - custom: every other chunk as it is written, and each emitted event once,
//     {"name": <name>, "data": <data>}.
//
// Chunks are provisional: LangGraph has no retraction, so the chunks of an attempt that
// failed stay sent, and the retry's follow (a message chunk without an id of its own is
// named after its attempt, so the retry's reply is another message).

// DurableStreamer is the optional capability of DurableAssistants that reports a run while it
// runs; package platformruns implements it on the engine's feed and live channel.
type DurableStreamer interface {
	// RunStream is Run, calling emit with what the run does until it waits for an event or
	// ends: each step's commit, each chunk as it is written, each emitted event once. An
	// error of emit ends the stream and is returned.
	RunStream(ctx context.Context, req DurableRunRequest, emit func(DurableEvent) error) (DurableState, error)
}

// Kinds of DurableEvent.
const (
	// DurableStep is a step's commit: Update what it wrote, Values the state after it.
	DurableStep = "step"
	// DurableChunk is a chunk a step wrote (durable.Write), as it is written.
	DurableChunk = "chunk"
	// DurableEmitted is an event a step emitted (durable.Emit), once.
	DurableEmitted = "emitted"
)

// DurableEvent is one thing a durable run did, as RunStream reports it.
type DurableEvent struct {
	// Kind is DurableStep, DurableChunk or DurableEmitted.
	Kind string
	// Node is the step's node ("" when unknown: an event handler's chunk).
	Node string
	// Values is the run's state after a step; nil after a branch, whose state shows at the
	// join, and for the other kinds.
	Values json.RawMessage
	// Update is what a step wrote: the state after a node or an applied event, a branch's
	// result; nil for a join and the other kinds.
	Update json.RawMessage
	// Name and Data are a chunk's or an emitted event's.
	Name string
	Data json.RawMessage
	// Writer names the step attempt that wrote a chunk; Step is its step, Attempt its attempt
	// (from 1) and Branch its index in a fan-out (-1 outside one). Chunks only.
	Writer  string
	Step    int64
	Attempt int
	Branch  int
}

// streamLive runs the durable run through ds, each event under the modes it belongs to, then
// the final state and the interrupt as StreamModes does.
func (a *durableAssistant) streamLive(ctx context.Context, ds DurableStreamer, req host.Request, modes []string, emit func(string, any) error) error {
	var lastValues json.RawMessage
	st, err := a.run(ctx, req, func(ctx context.Context, r DurableRunRequest) (DurableState, error) {
		return ds.RunStream(ctx, r, func(ev DurableEvent) error {
			if ev.Kind == DurableStep && ev.Values != nil {
				lastValues = ev.Values
			}
			return emitDurableEvent(ev, req.Config.ThreadID, modes, emit)
		})
	})
	if err != nil {
		return err
	}
	for _, mode := range modes {
		var chunks []any
		if mode == "values" && !bytes.Equal(lastValues, st.Values) {
			chunks = append(chunks, st.Values)
		}
		if st.Interrupt != nil && (mode == "values" || mode == "updates") {
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

// emitDurableEvent emits ev under each of modes it belongs to.
func emitDurableEvent(ev DurableEvent, tid string, modes []string, emit func(string, any) error) error {
	for _, mode := range modes {
		var chunk any
		switch {
		case mode == "values" && ev.Kind == DurableStep && ev.Values != nil:
			chunk = ev.Values
		case mode == "updates" && ev.Kind == DurableStep && ev.Update != nil:
			chunk = map[string]json.RawMessage{ev.Node: ev.Update}
		case mode == "messages-tuple" && ev.Kind == DurableChunk && ev.Name == durable.MessagesChunk:
			chunk = []any{durableMessage(ev), durableMetadata(ev, tid)}
		case mode == "custom" && (ev.Kind == DurableEmitted || ev.Kind == DurableChunk && ev.Name != durable.MessagesChunk):
			chunk = customEvent{Name: ev.Name, Data: ev.Data}
		default:
			continue
		}
		if err := emit(mode, chunk); err != nil {
			return err
		}
	}
	return nil
}

// customEvent is a chunk's or an emitted event's custom payload.
type customEvent struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

// durableMessage is a messages chunk's message: its data when an object (durable.MessageChunk,
// or any serialized message chunk), else {"content": <data>}; "type" is "AIMessageChunk" and
// "id" is "run-<writer>" unless the data has its own.
func durableMessage(ev DurableEvent) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(ev.Data, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{"content": ev.Data}
	}
	if !nonEmptyString(m["type"]) {
		m["type"] = json.RawMessage(`"AIMessageChunk"`)
	}
	if !nonEmptyString(m["id"]) {
		id, _ := json.Marshal("run-" + ev.Writer)
		m["id"] = id
	}
	return m
}

func nonEmptyString(v json.RawMessage) bool {
	var s string
	return json.Unmarshal(v, &s) == nil && s != ""
}

// durableMetadata is a messages chunk's metadata, named as LangGraph names it: the node, the
// step, the task's path (a branch is a pushed task, as a LangGraph Send), a checkpoint
// namespace naming the attempt, the thread and the attempt.
func durableMetadata(ev DurableEvent, tid string) map[string]any {
	path := []any{"__pregel_pull", ev.Node}
	if ev.Branch >= 0 {
		path = []any{"__pregel_push", ev.Branch}
	}
	ns := ev.Node + ":" + ev.Writer
	return map[string]any{"tags": []string{}, "langgraph_node": ev.Node, "langgraph_step": ev.Step,
		"langgraph_path": path, "langgraph_triggers": []string{}, "langgraph_checkpoint_ns": ns, "checkpoint_ns": ns,
		"thread_id": tid, "run_attempt": ev.Attempt}
}
