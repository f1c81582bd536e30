package a2aserver

import (
	"encoding/json"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Bounds of ListTasks.pageSize.
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// listTasks serves ListTasks: the caller's tasks of this agent, newest first, from the
// engine's index (the owner's partition under isolation).
func listTasks(c *call, params json.RawMessage) (any, error) {
	var req ListTasksRequest
	if len(params) > 0 && string(params) != "null" {
		if err := decodeParams(params, &req); err != nil {
			return nil, err
		}
	}
	q := engine.RunQuery{GraphName: c.name(), Group: req.ContextID, Limit: req.PageSize, ContinuationToken: req.PageToken}
	switch {
	case req.PageSize < 0 || req.PageSize > maxPageSize:
		return nil, rpcErr(CodeInvalidParams, "invalid params: pageSize must be within 1..%d", maxPageSize)
	case req.PageSize == 0:
		q.Limit = defaultPageSize
	}
	var keepInput *bool
	switch req.Status {
	case "", "TASK_STATE_UNSPECIFIED":
	case StateSubmitted:
		q.Status = engine.StatusPending
	case StateWorking, StateInputRequired:
		q.Status = engine.StatusRunning
		b := req.Status == StateInputRequired
		keepInput = &b
	case StateCompleted:
		q.Status = engine.StatusCompleted
	case StateFailed:
		q.Status = engine.StatusFailed
	case StateCanceled:
		q.Status = engine.StatusTerminated
	default:
		return nil, rpcErr(CodeInvalidParams, "invalid params: status %q is not a task state this agent has", req.Status)
	}
	if !c.caller.Admin {
		if c.caller.ID == "" {
			return ListTasksResponse{Tasks: []Task{}, PageSize: q.Limit}, nil // owns nothing
		}
		q.Owner = c.caller.ID
	}
	list, err := c.s.opts.Runs.ListRuns(c.ctx(), q)
	if err != nil {
		return nil, err
	}
	out := ListTasksResponse{Tasks: []Task{}, NextPageToken: list.ContinuationToken, PageSize: q.Limit}
	for _, run := range list.Runs {
		if !owns(c.caller, run) {
			continue // a second line: the owner index lists the caller's runs only
		}
		t := taskOf(run)
		if keepInput != nil && (t.Status.State == StateInputRequired) != *keepInput {
			continue
		}
		if req.IncludeArtifacts == nil || !*req.IncludeArtifacts {
			t.Artifacts = nil
		}
		out.Tasks = append(out.Tasks, t)
	}
	out.TotalSize = len(out.Tasks)
	return out, nil
}
