package a2aserver

import (
	"encoding/json"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Streams (SendStreamingMessage, SubscribeToTask) answer Server-Sent Events, each event's
// data one JSON-RPC response whose result is a StreamResponse: first the task, then a
// statusUpdate at each change of its state read from the run's feed (an artifactUpdate with
// the output before a completed one), and, as a step writes them, its live chunks as
// artifactUpdates of an artifact per step attempt (liveArtifact), ending after a final or
// input-required state, or at
// Options.MaxWait with the task as it is (subscribe again to go on). Under the Functions host
// the events reach the client together when the stream ends. An error before the first event
// is an ordinary JSON-RPC error response.

// streamMethods opens the stream of a method: the task's run as it is now, and whether the
// message just answered its wait.
var streamMethods = map[string]func(*call, json.RawMessage) (engine.Run, bool, error){
	"SendStreamingMessage": func(c *call, params json.RawMessage) (engine.Run, bool, error) {
		run, _, answered, err := c.send(params)
		return run, answered, err
	},
	"SubscribeToTask": func(c *call, params json.RawMessage) (engine.Run, bool, error) {
		var req GetTaskRequest
		if err := decodeParams(params, &req); err != nil {
			return engine.Run{}, false, err
		}
		run, err := c.task(req.ID)
		if err != nil {
			return engine.Run{}, false, err
		}
		if terminal(taskOf(run).Status.State) {
			return engine.Run{}, false, rpcErr(CodeUnsupportedOperation, "the task is %s: there is nothing to subscribe to", taskOf(run).Status.State)
		}
		return run, false, nil
	},
}

func (s *Server) serveStream(w http.ResponseWriter, c *call, req rpcRequest, open func(*call, json.RawMessage) (engine.Run, bool, error)) {
	if _, ok := s.opts.Runs.(engine.RunFeeder); !ok {
		writeRPC(w, http.StatusOK, req.ID, nil, rpcErr(CodeUnsupportedOperation, "streaming is not supported by this server"))
		return
	}
	run, answered, err := open(c, req.Params)
	if err != nil {
		writeRPC(w, http.StatusOK, req.ID, nil, s.answerError(c.ctx(), req.Method, err))
		return
	}
	startEvents(w)
	send := func(v StreamResponse) error { return writeEvent(w, req.ID, v) }
	first := taskOf(run)
	if err := send(StreamResponse{Task: &first}); err != nil {
		return
	}
	_, err = c.await(run, answered, interrupted, func(run engine.Run) error {
		t := taskOf(run)
		for _, a := range t.Artifacts {
			if err := send(StreamResponse{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Artifact: a, LastChunk: true}}); err != nil {
				return err
			}
		}
		return send(StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status}})
	}, func(rec engine.LiveRecord) error {
		if ev := liveArtifact(first.ID, first.ContextID, rec); ev != nil {
			return send(StreamResponse{ArtifactUpdate: ev})
		}
		return nil
	})
	if err != nil && c.ctx().Err() == nil {
		s.opts.Logger.ErrorContext(c.ctx(), "a2a stream failed", "method", req.Method, "error", err)
	}
}

// startEvents answers 200 with the headers of an event stream.
func startEvents(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// writeEvent writes one event of a stream: a JSON-RPC response of request id whose result is
// v, flushed.
func writeEvent(w http.ResponseWriter, id json.RawMessage, v StreamResponse) error {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: v})
	if err != nil {
		return err
	}
	if _, err := w.Write(append(append([]byte("data: "), b...), '\n', '\n')); err != nil {
		return err
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// liveArtifact is the artifactUpdate of one live record: a chunk or an emitted event is a
// part appended to the artifact "live-<writer>" of the step attempt that wrote it (its first
// chunk starts it), named after the chunk; a retract ends that artifact as the last chunk,
// its metadata {"retracted": true} telling the client to drop what it showed (the attempt
// failed; another writes anew). A commit record says nothing a status update will not.
func liveArtifact(taskID, contextID string, rec engine.LiveRecord) *TaskArtifactUpdateEvent {
	id := "live-" + rec.Writer
	switch rec.Kind {
	case engine.LiveChunk, engine.LiveCustom:
		return &TaskArtifactUpdateEvent{TaskID: taskID, ContextID: contextID, Append: rec.Seq > 1,
			Artifact: Artifact{ArtifactID: id, Name: rec.Name, Parts: []Part{{Data: rec.Data, MediaType: "application/json"}}}}
	case engine.LiveRetract:
		return &TaskArtifactUpdateEvent{TaskID: taskID, ContextID: contextID, Append: true, LastChunk: true,
			Artifact: Artifact{ArtifactID: id, Parts: []Part{}, Metadata: json.RawMessage(`{"retracted":true}`)}}
	}
	return nil
}
