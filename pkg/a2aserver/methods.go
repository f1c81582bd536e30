package a2aserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// call is one JSON-RPC request on one agent.
type call struct {
	s      *Server
	graph  durable.Graph
	caller isolation.Caller
	r      *http.Request
}

func (c *call) ctx() context.Context { return c.r.Context() }
func (c *call) name() string         { return c.graph.Manifest().GraphName }

var methods map[string]func(*call, json.RawMessage) (any, error)

func init() {
	methods = map[string]func(*call, json.RawMessage) (any, error){
		"SendMessage":                      sendMessage,
		"GetTask":                          getTask,
		"CancelTask":                       cancelTask,
		"ListTasks":                        listTasks,
		"CreateTaskPushNotificationConfig": func(*call, json.RawMessage) (any, error) { return nil, errPushNotifying },
		"GetTaskPushNotificationConfig":    func(*call, json.RawMessage) (any, error) { return nil, errPushNotifying },
		"ListTaskPushNotificationConfigs":  func(*call, json.RawMessage) (any, error) { return nil, errPushNotifying },
		"DeleteTaskPushNotificationConfig": func(*call, json.RawMessage) (any, error) { return nil, errPushNotifying },
		"GetExtendedAgentCard": func(*call, json.RawMessage) (any, error) {
			return nil, rpcErr(CodeExtendedCardNotConfigured, "no extended agent card is configured")
		},
	}
}

// task reads the caller's task id of this agent: TaskNotFound for an unknown id, a run of
// another graph or of another identity.
func (c *call) task(id string) (engine.Run, error) {
	if !engine.ValidInstanceID(id) {
		return engine.Run{}, errTaskNotFound
	}
	run, err := c.s.opts.Runs.GetRun(c.ctx(), id)
	if err != nil {
		return engine.Run{}, err
	}
	if run.GraphName != c.name() || !owns(c.caller, run) {
		return engine.Run{}, errTaskNotFound
	}
	return run, nil
}

// sendMessage serves SendMessage: the task as it is once the run finished or needs input
// (within Options.MaxWait), or at once with configuration.returnImmediately.
func sendMessage(c *call, params json.RawMessage) (any, error) {
	run, cfg, answered, err := c.send(params)
	if err != nil {
		return nil, err
	}
	if !cfg.ReturnImmediately && (cfg.Blocking == nil || *cfg.Blocking) {
		if run, err = c.await(run, answered, interrupted, nil, nil); err != nil {
			return nil, err
		}
	}
	t := taskOf(run)
	return SendMessageResponse{Task: &t}, nil
}

// readMessage decodes the params of SendMessage and SendStreamingMessage: a user message
// with an id, and no push notification config.
func readMessage(params json.RawMessage) (*Message, SendMessageConfiguration, error) {
	var req SendMessageRequest
	var cfg SendMessageConfiguration
	if err := decodeParams(params, &req); err != nil {
		return nil, cfg, err
	}
	if req.Configuration != nil {
		cfg = *req.Configuration
	}
	if set(cfg.TaskPushNotificationConfig) || set(cfg.PushNotificationConfig) {
		return nil, cfg, errPushNotifying
	}
	m := req.Message
	if m == nil {
		return nil, cfg, rpcErr(CodeInvalidParams, "invalid params: message is required")
	}
	if m.MessageID == "" || len(m.MessageID) > maxMessageIDBytes {
		return nil, cfg, rpcErr(CodeInvalidParams, "invalid params: message.messageId must be 1-%d bytes", maxMessageIDBytes)
	}
	if m.Role != RoleUser && m.Role != "user" {
		return nil, cfg, rpcErr(CodeInvalidParams, "invalid params: message.role must be ROLE_USER")
	}
	return m, cfg, nil
}

// send starts a task or answers one, and returns its run as read after.
func (c *call) send(params json.RawMessage) (run engine.Run, cfg SendMessageConfiguration, answered bool, err error) {
	m, cfg, err := readMessage(params)
	if err != nil {
		return engine.Run{}, cfg, false, err
	}
	data, text, hasText, err := messageInput(m, c.s.opts.MaxInputDepth)
	if err != nil {
		return engine.Run{}, cfg, false, err
	}
	if m.TaskID != "" {
		run, err := c.answer(m, eventPayload(data, text))
		return run, cfg, true, err
	}
	input, err := startInput(data, text, hasText, c.s.opts.TextFields[c.name()])
	if err != nil {
		return engine.Run{}, cfg, false, err
	}
	group := m.ContextID
	if group == "" {
		group = newContextID()
	} else if !engine.ValidGroup(group) {
		return engine.Run{}, cfg, false, rpcErr(CodeInvalidParams, "invalid params: contextId must be 1-256 printable ASCII characters without / \\ # ?")
	}
	id := taskID(c.caller, c.name(), m.MessageID)
	run, err = c.s.opts.Runs.StartRun(c.ctx(), engine.StartRunRequest{GraphName: c.name(), InstanceID: id, Input: input,
		Metadata: ownerMetadata(c.caller), Group: group, NoReplace: true})
	var exists *engine.RunExistsError
	if errors.As(err, &exists) {
		// The same message sent again (a client that lost the answer): the task it started.
		run, err = c.task(id)
		return run, cfg, false, err
	}
	if errors.Is(err, durable.ErrInvalidState) {
		return engine.Run{}, cfg, false, rpcErr(CodeInvalidParams, "invalid params: the message is not an input of %s: %v", c.name(), err)
	}
	if err != nil {
		return engine.Run{}, cfg, false, err
	}
	c.s.opts.Logger.InfoContext(c.ctx(), "a2a task started", "run_id", run.InstanceID, "graph", c.name())
	return run, cfg, false, nil
}

// answer delivers a message to the input-required task it names, as the event its run waits
// for.
func (c *call) answer(m *Message, payload json.RawMessage) (engine.Run, error) {
	run, err := c.task(m.TaskID)
	if err != nil {
		return engine.Run{}, err
	}
	if m.ContextID != "" && m.ContextID != run.Group {
		return engine.Run{}, rpcErr(CodeInvalidParams, "invalid params: contextId does not match the task's")
	}
	event := waitingEvent(run)
	if event == "" {
		state := taskState(run.RuntimeStatus, false)
		return engine.Run{}, rpcErr(CodeUnsupportedOperation, "the task is %s, not input-required: it takes no message", state)
	}
	var fin *engine.RunFinishedError
	err = c.s.opts.Runs.RaiseEvent(c.ctx(), run.InstanceID, event, payload, engine.WithIdempotencyKey("a2a:"+m.MessageID))
	switch {
	case errors.As(err, &fin):
		return engine.Run{}, rpcErr(CodeUnsupportedOperation, "the task is %s: it takes no message", taskState(fin.Status, false))
	case err != nil:
		return engine.Run{}, err
	}
	c.s.opts.Logger.InfoContext(c.ctx(), "a2a task answered", "run_id", run.InstanceID, "event", event)
	// Read again: the answer is accepted; the task is working until the run moves on.
	after, err := c.s.opts.Runs.GetRun(c.ctx(), run.InstanceID)
	if err != nil {
		return engine.Run{}, err
	}
	if waitingEvent(after) == event {
		// The event is stored, not (known to be) applied yet: working, not input-required;
		// await tells an answered wait from a new one.
		after.CustomStatus = nil
	}
	return after, nil
}

// getTask serves GetTask.
func getTask(c *call, params json.RawMessage) (any, error) {
	var req GetTaskRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	run, err := c.task(req.ID)
	if err != nil {
		return nil, err
	}
	return taskOf(run), nil
}

// cancelTask serves CancelTask: the run's cancel is recorded, and the task answered once the
// run stopped (canceled; completed or failed when it finished first), within Options.MaxWait.
// A finished task is TaskNotCancelable.
func cancelTask(c *call, params json.RawMessage) (any, error) {
	var req GetTaskRequest
	if err := decodeParams(params, &req); err != nil {
		return nil, err
	}
	run, err := c.task(req.ID)
	if err != nil {
		return nil, err
	}
	if err := c.s.opts.Runs.CancelRun(c.ctx(), run.InstanceID, "canceled by an A2A client"); err != nil {
		return nil, err
	}
	c.s.opts.Logger.InfoContext(c.ctx(), "a2a task cancel accepted", "run_id", run.InstanceID)
	if run, err = c.s.opts.Runs.GetRun(c.ctx(), run.InstanceID); err != nil {
		return nil, err
	}
	run.CustomStatus = nil // a wait no longer needs input: the cancel is recorded
	// Wait (within Options.MaxWait) for the run to stop: the answer is the canceled task,
	// or the task as it is then (working until the run reads its cancel).
	if run, err = c.await(run, false, terminal, nil, nil); err != nil {
		return nil, err
	}
	return taskOf(run), nil
}

// maxMessageIDBytes bounds a message id, which names the task it starts.
const maxMessageIDBytes = 256

// taskID returns the id of the task a message starts: one per caller, agent and message id,
// so that the same message sent again (its answer lost) finds the task it started instead of
// starting another run.
func taskID(c isolation.Caller, graph, messageID string) string {
	owner := c.ID
	if c.Admin {
		owner = "" // the master key and a caller without isolation: one namespace
	}
	sum := sha256.Sum256([]byte(owner + "\x00" + graph + "\x00" + messageID))
	return "a2a-" + hex.EncodeToString(sum[:16])
}

// newContextID returns a random context id for a message that names none.
func newContextID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "ctx-" + hex.EncodeToString(b[:])
}

// set reports whether a JSON member was sent with a value other than null.
func set(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
