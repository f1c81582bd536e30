package a2aserver

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/hostcall"
)

// A hosted graph (Options.Hosted) is an agent without tasks: a message runs the graph within
// the request, through its invoke route, and is answered by a message of the agent whose data
// part is the graph's output. A graph with a checkpointer keeps a thread per context: the
// message's contextId is the thread id (a new context, named in the answer, when it has
// none), so the next message of the context goes on with the conversation.

// hostedAgent is one hosted graph served as an agent.
type hostedAgent struct {
	name, description string
	checkpointed      bool
	fn                funchost.HTTPFunction
}

// hosted returns the hosted graph named name, when Options.Hosted has one whose routes need
// no higher auth level than the endpoint's; a durable graph of that name is served instead,
// so the caller asks for it first.
func (s *Server) hosted(name string) (hostedAgent, bool) {
	if s.opts.Hosted == nil {
		return hostedAgent{}, false
	}
	fn, ok := s.opts.Hosted.InvokeFunction(name)
	if !ok || hostcall.LevelRank(fn.AuthLevel) > hostcall.LevelRank(s.opts.AuthLevel) {
		return hostedAgent{}, false
	}
	a := hostedAgent{name: name, fn: fn}
	for _, g := range s.opts.Hosted.Graphs() {
		if g.Name == name {
			a.checkpointed = g.HasCheckpointer
			if g.Description != nil {
				a.description = *g.Description
			}
		}
	}
	return a, true
}

// hostedMethods answer the methods of a hosted agent: SendMessage runs the graph; it keeps
// no tasks, so the task methods find none and ListTasks lists none.
var hostedMethods = map[string]func(*call, hostedAgent, json.RawMessage) (any, error){
	"SendMessage": func(c *call, a hostedAgent, params json.RawMessage) (any, error) {
		m, err := c.sendHosted(a, params)
		if err != nil {
			return nil, err
		}
		return SendMessageResponse{Message: m}, nil
	},
	"GetTask":                          noHostedTask,
	"CancelTask":                       noHostedTask,
	"CreateTaskPushNotificationConfig": noPushNotifying,
	"GetTaskPushNotificationConfig":    noPushNotifying,
	"ListTaskPushNotificationConfigs":  noPushNotifying,
	"DeleteTaskPushNotificationConfig": noPushNotifying,
	"GetExtendedAgentCard": func(*call, hostedAgent, json.RawMessage) (any, error) {
		return nil, rpcErr(CodeExtendedCardNotConfigured, "no extended agent card is configured")
	},
	"ListTasks": func(c *call, _ hostedAgent, params json.RawMessage) (any, error) {
		var req ListTasksRequest
		if err := decodeParams(params, &req); err != nil {
			return nil, err
		}
		if req.PageSize < 0 || req.PageSize > maxPageSize {
			return nil, rpcErr(CodeInvalidParams, "invalid params: pageSize must be within 1..%d", maxPageSize)
		}
		return ListTasksResponse{Tasks: []Task{}, PageSize: cmp.Or(req.PageSize, defaultPageSize)}, nil
	},
}

func noPushNotifying(*call, hostedAgent, json.RawMessage) (any, error) { return nil, errPushNotifying }

func noHostedTask(_ *call, _ hostedAgent, params json.RawMessage) (any, error) {
	var req GetTaskRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	return nil, errTaskNotFound
}

// sendHosted runs a's graph on a message and returns the agent's answer.
func (c *call) sendHosted(a hostedAgent, params json.RawMessage) (*Message, error) {
	m, _, err := readMessage(params)
	if err != nil {
		return nil, err
	}
	if m.TaskID != "" {
		return nil, errTaskNotFound // a hosted agent keeps no tasks to continue
	}
	data, text, hasText, err := messageInput(m, c.s.opts.MaxInputDepth)
	if err != nil {
		return nil, err
	}
	input, err := startInput(data, text, hasText, c.s.opts.TextFields[a.name])
	if err != nil {
		return nil, err
	}
	contextID := m.ContextID
	if contextID == "" {
		contextID = newContextID()
	} else if !engine.ValidGroup(contextID) {
		return nil, rpcErr(CodeInvalidParams, "invalid params: contextId must be 1-256 printable ASCII characters without / \\ # ?")
	}
	thread := ""
	if a.checkpointed {
		thread = contextID
	}
	res, err := hostcall.Invoke(c.ctx(), c.r, a.fn, c.s.opts.RoutePrefix, input, thread, c.s.opts.MaxResultBytes)
	switch {
	case err != nil:
		return nil, rpcErr(CodeInvalidParams, "invalid params: the message is not an input of %s", a.name)
	case res.TooLarge:
		return nil, rpcErr(CodeInternalError, "the answer of %s is larger than the limit of %d bytes", a.name, c.s.opts.MaxResultBytes)
	case res.Output != nil:
		c.s.opts.Logger.InfoContext(c.ctx(), "a2a hosted message answered", "graph", a.name)
		return &Message{MessageID: newMessageID(), ContextID: contextID, Role: RoleAgent,
			Parts: []Part{{Data: res.Output, MediaType: "application/json"}}}, nil
	case res.Status == http.StatusNotFound && thread != "":
		return nil, rpcErr(CodeInvalidParams, "invalid params: context %s not found", contextID)
	case res.Status >= 400 && res.Status < 500:
		return nil, rpcErr(CodeInvalidParams, "invalid params: %s", res.Message)
	}
	return nil, rpcErr(CodeInternalError, "%s", res.Message) // the route's public message
}

// newMessageID returns a random id for an agent's message.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "msg-" + hex.EncodeToString(b[:])
}

// serveHostedRPC answers one JSON-RPC request on a hosted agent. SendStreamingMessage
// answers a stream of one event, the agent's message; SubscribeToTask finds no task; the
// push notification and extended card methods answer as for a durable agent.
func (s *Server) serveHostedRPC(w http.ResponseWriter, c *call, a hostedAgent, req rpcRequest) {
	switch req.Method {
	case "SendStreamingMessage":
		m, err := c.sendHosted(a, req.Params)
		if err != nil {
			writeRPC(w, http.StatusOK, req.ID, nil, s.answerError(c.ctx(), req.Method, err))
			return
		}
		startEvents(w)
		_ = writeEvent(w, req.ID, StreamResponse{Message: m})
		return
	case "SubscribeToTask":
		writeRPC(w, http.StatusOK, req.ID, nil, errTaskNotFound)
		return
	}
	m, ok := hostedMethods[req.Method]
	if !ok {
		writeRPC(w, http.StatusOK, req.ID, nil, rpcErr(CodeMethodNotFound, "method not found: %s", req.Method))
		return
	}
	result, err := m(c, a, req.Params)
	if err != nil {
		writeRPC(w, http.StatusOK, req.ID, nil, s.answerError(c.ctx(), req.Method, err))
		return
	}
	writeRPC(w, http.StatusOK, req.ID, result, nil)
}
