package a2aserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonlimit"
)

// How a run is seen as a task:
//
//	Pending                            TASK_STATE_SUBMITTED
//	Running                            TASK_STATE_WORKING
//	Running, waiting for an event      TASK_STATE_INPUT_REQUIRED (status message names the event)
//	Completed                          TASK_STATE_COMPLETED (artifact "output": the final state)
//	Failed                             TASK_STATE_FAILED (status message: the failure)
//	Terminated                         TASK_STATE_CANCELED (status message: the reason)
//
// The task's contextId is the run's group (engine.StartRunRequest.Group).

// taskState returns the task state of a run status; waiting says the run waits for an event.
func taskState(s engine.RunStatus, waiting bool) string {
	switch s {
	case engine.StatusPending:
		return StateSubmitted
	case engine.StatusCompleted:
		return StateCompleted
	case engine.StatusFailed:
		return StateFailed
	case engine.StatusTerminated:
		return StateCanceled
	}
	if waiting {
		return StateInputRequired
	}
	return StateWorking
}

// terminal reports whether a task state is final: nothing follows it.
func terminal(state string) bool {
	return state == StateCompleted || state == StateFailed || state == StateCanceled
}

// interrupted reports whether a stream or a blocking send ends at state: a final state or
// one that needs the client.
func interrupted(state string) bool { return terminal(state) || state == StateInputRequired }

// waitingEvent returns the event a Running run waits for, or "".
func waitingEvent(run engine.Run) string {
	if run.RuntimeStatus != engine.StatusRunning {
		return ""
	}
	p, ok := run.Progress()
	if !ok {
		return ""
	}
	return p.WaitingForEvent
}

// taskOf returns run as a task.
func taskOf(run engine.Run) Task {
	event := waitingEvent(run)
	state := taskState(run.RuntimeStatus, event != "")
	t := Task{ID: run.InstanceID, ContextID: run.Group, Status: TaskStatus{State: state}}
	if !run.UpdatedAt.IsZero() {
		t.Status.Timestamp = run.UpdatedAt.UTC().Format(time.RFC3339Nano)
	}
	agent := func(parts ...Part) *Message {
		return &Message{MessageID: run.InstanceID + ":" + state, ContextID: run.Group, TaskID: run.InstanceID, Role: RoleAgent, Parts: parts}
	}
	switch state {
	case StateInputRequired:
		p, _ := run.Progress()
		data, _ := json.Marshal(map[string]string{"waiting_for_event": event, "current_node": p.CurrentNode, "resume_node": p.ResumeNode})
		t.Status.Message = agent(textPart("waiting for event "+event), Part{Data: data})
	case StateCompleted:
		var out struct {
			State json.RawMessage `json:"state"`
		}
		if json.Unmarshal(run.Output, &out) == nil && len(out.State) > 0 {
			t.Artifacts = []Artifact{{ArtifactID: "output", Name: "output", Description: "the run's final state", Parts: []Part{{Data: out.State}}}}
		}
	case StateFailed, StateCanceled:
		var msg string
		if json.Unmarshal(run.Output, &msg) == nil && msg != "" {
			t.Status.Message = agent(textPart(msg))
		}
	}
	return t
}

func textPart(s string) Part { return Part{Text: &s} }

// messageInput returns what a message carries, by the mapping of docs/a2a.md: its data part
// (at most one, a JSON value within maxDepth) and its text parts joined with newlines. A
// url or raw (file) part is refused, and so is a message with neither data nor text.
func messageInput(m *Message, maxDepth int) (data json.RawMessage, text string, hasText bool, err error) {
	var texts []string
	for _, p := range m.Parts {
		switch {
		case p.Text != nil && len(p.Data) == 0:
			texts = append(texts, *p.Text)
		case len(p.Data) > 0 && p.Text == nil:
			if data != nil {
				return nil, "", false, rpcErr(CodeInvalidParams, "invalid params: a message carries at most one data part")
			}
			if string(bytes.TrimSpace(p.Data)) == "null" {
				return nil, "", false, rpcErr(CodeInvalidParams, "invalid params: a data part must not be null")
			}
			if jsonlimit.Check(p.Data, maxDepth, 0) != nil {
				return nil, "", false, rpcErr(CodeInvalidParams, "invalid params: a data part must be JSON nested at most %d deep", maxDepth)
			}
			data = p.Data
		case p.URL != nil || p.Raw != nil:
			return nil, "", false, rpcErr(CodeContentTypeNotSupported, "file parts (url, raw) are not supported: send text or data parts")
		default:
			return nil, "", false, rpcErr(CodeInvalidParams, "invalid params: a part must hold exactly one of text, data, url, raw")
		}
	}
	if data == nil && texts == nil {
		return nil, "", false, rpcErr(CodeInvalidParams, "invalid params: the message has no text or data part")
	}
	return data, strings.Join(texts, "\n"), texts != nil, nil
}

// startInput returns the start input of a new task: the data part (a JSON object) with the
// text, when there is text, in field (which must be configured for the graph).
func startInput(data json.RawMessage, text string, hasText bool, field string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if data != nil {
		if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
			return nil, rpcErr(CodeInvalidParams, "invalid params: the data part of a new task's message must be a JSON object (the graph's input)")
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, rpcErr(CodeInvalidParams, "invalid params: the data part is not a JSON object")
		}
	}
	if hasText {
		if field == "" {
			return nil, rpcErr(CodeInvalidParams, "invalid params: this agent takes a data part (its input object); it has no text field")
		}
		if _, ok := obj[field]; ok {
			return nil, rpcErr(CodeInvalidParams, "invalid params: the text parts and the data part both set %q", field)
		}
		obj[field], _ = json.Marshal(text)
	}
	if data != nil && !hasText {
		return data, nil // as sent, member order kept
	}
	return json.Marshal(obj)
}

// eventPayload returns the event a message delivers to an input-required task: the data part
// as it is, else the text as a JSON string.
func eventPayload(data json.RawMessage, text string) json.RawMessage {
	if data != nil {
		return data
	}
	b, _ := json.Marshal(text)
	return b
}
