package platform

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// RunRequest is a parsed RunCreate body: what a run needs to execute. It is plain data so a
// durable backend can persist it.
type RunRequest struct {
	// AssistantID names the graph.
	AssistantID string `json:"assistant_id"`
	// Input is the graph input object ({} when absent).
	Input json.RawMessage `json:"input"`
	// Config is the caller's config object, or nil.
	Config json.RawMessage `json:"config,omitempty"`
	// Context is the caller's context object, or nil.
	Context json.RawMessage `json:"context,omitempty"`
	// Metadata is merged into the thread's metadata when the run lock is taken.
	Metadata map[string]any `json:"metadata,omitempty"`
	// StreamMode is the normalised stream mode ("values" by default); with several modes, the
	// first of them.
	StreamMode string `json:"stream_mode"`
	// StreamModes lists the requested modes when there are two or more (duplicates removed,
	// request order); nil for one mode.
	StreamModes []string `json:"stream_modes,omitempty"`
	// IfNotExists is "create" (a missing thread is created with the path's id) or "reject"
	// (the default, "": a missing thread is 404).
	IfNotExists string `json:"if_not_exists,omitempty"`
	// OnCompletion is what a threadless run on a temporary thread does with it when it ends:
	// "delete" (the default, "") or "keep".
	OnCompletion string `json:"on_completion,omitempty"`
	// temporary marks a threadless run on a temporary thread.
	temporary bool
	// owner is the thread's owner once the run lock is taken, under isolation: the owner a
	// durable assistant's engine run records (DurableRunRequest.Owner). Not persisted: a
	// background run takes the lock, and learns it, again.
	owner string
	// Resume is command.resume of a run on a durable assistant: the payload of the event its
	// durable run waits for; nil otherwise.
	Resume json.RawMessage `json:"resume,omitempty"`
	// MultitaskStrategy is "reject" (default) or, for background runs, "enqueue".
	MultitaskStrategy string `json:"multitask_strategy"`
}

// locationThread is the thread a run's Content-Location names: "" for a threadless run whose
// temporary thread is deleted when it ends.
func (r *RunRequest) locationThread(tid string) string {
	if r.temporary && r.OnCompletion != "keep" {
		return ""
	}
	return tid
}

// modes returns the requested stream modes.
func (r *RunRequest) modes() []string {
	if len(r.StreamModes) > 0 {
		return r.StreamModes
	}
	return []string{r.StreamMode}
}

// unsupportedRunFields are the RunCreate fields answered 501, in check order.
var unsupportedRunFields = []struct{ field, detail string }{
	{"interrupt_before", "Interrupt-before is not supported in this release."},
	{"interrupt_after", "Interrupt-after is not supported in this release."},
	{"webhook", "Webhook callbacks are not supported in this release."},
	{"after_seconds", "Delayed runs are not supported in this release."},
	{"checkpoint_id", "Checkpoint resumption is not supported in this release."},
	{"command", "Command-based resumption is not supported in this release."},
	{"feedback_keys", "Feedback keys are not supported in this release."},
}

// runKind says which route parses a RunCreate body.
type runKind int

const (
	threadedRun runKind = iota
	threadlessRun
	backgroundRun
)

// parseRun applies the shared parse chain: size, JSON, (threadless) object, schema (422),
// the graph name rule on assistant_id (400), then the 501s of unsupported fields.
func (s *Service) parseRun(r *http.Request, kind runKind) (*RunRequest, error) {
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return nil, err
	}
	mode := requiredSchema
	if kind == threadlessRun {
		mode = requiredObject
	}
	obj, err := parseBody(body, mode)
	if err != nil {
		return nil, err
	}
	req, err := runSchema(obj)
	if err != nil {
		return nil, err
	}
	if err := host.ValidateGraphName(req.AssistantID); err != nil {
		return nil, apierror.New(apierror.ErrBadRequest, err.Error())
	}
	if err := s.parseCommand(obj, req); err != nil {
		return nil, err
	}
	for _, f := range unsupportedRunFields {
		if obj.has(f.field) && (f.field != "command" || req.Resume == nil) {
			return nil, apierror.New(apierror.ErrNotImplemented, f.detail)
		}
	}
	switch m := req.MultitaskStrategy; {
	case m == "reject":
	case m == "enqueue" && kind == backgroundRun:
	case kind == backgroundRun:
		return nil, apierror.Newf(apierror.ErrNotImplemented, "Multitask strategy %s is not supported; only 'reject' and 'enqueue' are available.", repr(m))
	default:
		return nil, apierror.Newf(apierror.ErrNotImplemented, "Multitask strategy %s is not supported; only 'reject' is available.", repr(m))
	}
	return req, nil
}

// runSchema checks the member types of a RunCreate body (422).
func runSchema(obj object) (*RunRequest, error) {
	req := &RunRequest{Input: json.RawMessage("{}"), StreamMode: "values", MultitaskStrategy: "reject"}
	a, ok, err := obj.optString("assistant_id")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierror.Invalid("assistant_id", "Field required")
	}
	req.AssistantID = a
	if _, _, err := obj.optString("thread_id"); err != nil {
		return nil, err
	}
	if in, err := obj.optObject("input"); err != nil {
		return nil, err
	} else if in != nil {
		req.Input = in
	}
	meta, err := obj.optObject("metadata")
	if err != nil {
		return nil, err
	}
	req.Metadata = decodeMap(meta)
	if req.Config, err = obj.optObject("config"); err != nil {
		return nil, err
	}
	if req.Context, err = obj.optObject("context"); err != nil {
		return nil, err
	}
	if _, err := obj.optObject("command"); err != nil {
		return nil, err
	}
	for _, k := range []string{"webhook", "checkpoint_id"} {
		if _, _, err := obj.optString(k); err != nil {
			return nil, err
		}
	}
	if req.IfNotExists, err = optEnum(obj, "if_not_exists", "Input should be 'create' or 'reject'", "create", "reject"); err != nil {
		return nil, err
	}
	if req.IfNotExists == "reject" {
		req.IfNotExists = ""
	}
	if req.OnCompletion, err = optEnum(obj, "on_completion", "Input should be 'delete' or 'keep'", "delete", "keep"); err != nil {
		return nil, err
	}
	if req.OnCompletion == "delete" {
		req.OnCompletion = ""
	}
	if v, ok := obj["after_seconds"]; ok && !isNull(v) && kindOf(v) != 'n' {
		return nil, apierror.Invalid("after_seconds", "Input should be a valid number")
	}
	for _, k := range []string{"interrupt_before", "interrupt_after"} {
		if v, ok := obj[k]; ok && !isNull(v) {
			var star string
			if json.Unmarshal(v, &star) == nil && star == "*" {
				continue
			}
			if !isStringArray(v) {
				return nil, apierror.Invalid(k, "Input should be '*' or a valid list of strings")
			}
		}
	}
	if v, ok := obj["feedback_keys"]; ok && !isNull(v) && !isStringArray(v) {
		return nil, apierror.Invalid("feedback_keys", "Input should be a valid list of strings")
	}
	if m, ok, err := obj.optString("multitask_strategy"); err != nil {
		return nil, err
	} else if ok {
		switch m {
		case "reject", "interrupt", "rollback", "enqueue":
			req.MultitaskStrategy = m
		default:
			return nil, apierror.Invalid("multitask_strategy", "Input should be 'reject', 'interrupt', 'rollback' or 'enqueue'")
		}
	}
	if v, ok := obj["stream_mode"]; ok && !isNull(v) {
		var one string
		var many []string
		switch {
		case json.Unmarshal(v, &one) == nil && kindOf(v) == 's':
			req.StreamMode = one
		case kindOf(v) == 'a' && json.Unmarshal(v, &many) == nil:
			many = dedupe(many)
			if len(many) > 0 {
				req.StreamMode = many[0]
			}
			if len(many) > 1 {
				req.StreamModes = many
			}
		default:
			return nil, apierror.Invalid("stream_mode", "Input should be a valid string or a list of strings")
		}
	}
	return req, nil
}

// optEnum reads the optional string member k, which must be one of allowed (422 with msg).
func optEnum(obj object, k, msg string, allowed ...string) (string, error) {
	v, ok, err := obj.optString(k)
	if err != nil || !ok {
		return "", err
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", apierror.Invalid(k, msg)
}

// dedupe drops repeated strings, keeping the first of each in order.
func dedupe(xs []string) []string {
	out := xs[:0:0]
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func isStringArray(v json.RawMessage) bool {
	var xs []string
	return kindOf(v) == 'a' && json.Unmarshal(v, &xs) == nil
}

// checkRunLimits applies the depth and node rules to input and config, each only if
// non-empty.
func (s *Service) checkRunLimits(req *RunRequest) error {
	for _, v := range []json.RawMessage{req.Input, req.Config} {
		if v == nil || isEmptyObject(v) {
			continue
		}
		if err := checkLimits(v, s.maxDepth, s.maxNodes); err != nil {
			return err
		}
	}
	return nil
}

func isEmptyObject(v json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(v, &m) == nil && len(m) == 0
}

// threadedConfig returns the caller's config with configurable.thread_id forced to tid (other
// configurable keys and top-level keys kept).
func threadedConfig(cfg json.RawMessage, tid string) json.RawMessage {
	top := map[string]json.RawMessage{}
	if cfg != nil {
		_ = json.Unmarshal(cfg, &top)
	}
	conf := map[string]json.RawMessage{}
	if c, ok := top["configurable"]; ok && kindOf(c) == 'o' {
		_ = json.Unmarshal(c, &conf)
	}
	conf["thread_id"], _ = json.Marshal(tid)
	top["configurable"], _ = json.Marshal(conf)
	out, _ := json.Marshal(top)
	return out
}

// hasThreadID reports config.configurable.thread_id present.
func hasThreadID(cfg json.RawMessage) bool {
	var top struct {
		Configurable map[string]json.RawMessage `json:"configurable"`
	}
	if cfg == nil || json.Unmarshal(cfg, &top) != nil {
		return false
	}
	_, ok := top.Configurable["thread_id"]
	return ok
}

// parseCommand reads command.resume of a run on a durable assistant into req.Resume; any
// other command (or a command on another graph) is left to the 501 of unsupportedRunFields.
func (s *Service) parseCommand(obj object, req *RunRequest) error {
	raw, ok := obj["command"]
	if !ok || isNull(raw) {
		return nil
	}
	if _, ok := s.durableGraph(req.AssistantID); !ok {
		return nil
	}
	var cmd map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cmd); err != nil {
		return apierror.Invalid("command", "Input should be a valid dictionary")
	}
	for k, v := range cmd {
		if k != "resume" && !isNull(v) {
			return apierror.Newf(apierror.ErrNotImplemented, "Command %s is not supported; only 'resume' is available.", repr(k))
		}
	}
	if r, ok := cmd["resume"]; ok {
		req.Resume = r
	}
	return nil
}
