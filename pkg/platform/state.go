package platform

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// resolveGraph finds the graph a thread is bound to, for the state routes. capability names
// what the route needs in the 409 message; ok reports whether the graph has it.
func (s *Service) resolveGraph(r *http.Request, tid, capability string, has func(host.InvocableGraph) bool) (host.InvocableGraph, error) {
	t, err := s.visibleThread(r.Context(), tid)
	if err != nil {
		return nil, err
	}
	if t.AssistantID == "" {
		return nil, apierror.Newf(apierror.ErrConflict, "Thread %s is not bound to any assistant. Run a graph on this thread first.", repr(tid))
	}
	g, ok := s.graph(t.AssistantID)
	if !ok {
		return nil, apierror.Newf(apierror.ErrNotFound, "Assistant %s not found for thread %s", repr(t.AssistantID), repr(tid))
	}
	if !has(g) {
		return nil, apierror.Newf(apierror.ErrConflict, "Graph %s does not support %s", repr(t.AssistantID), capability)
	}
	return g, nil
}

func (s *Service) serveStateGet(w http.ResponseWriter, r *http.Request) {
	st, err := s.stateGet(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, st)
}

func (s *Service) stateGet(r *http.Request) (threadStateBody, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return threadStateBody{}, err
	}
	return s.latestState(r, tid)
}

// latestState answers thread tid's latest state.
func (s *Service) latestState(r *http.Request, tid string) (threadStateBody, error) {
	g, err := s.resolveGraph(r, tid, "state retrieval", func(g host.InvocableGraph) bool { _, ok := g.(host.StatefulGraph); return ok })
	if err != nil {
		return threadStateBody{}, err
	}
	if da, ok := g.(*durableAssistant); ok {
		return s.durableState(r, da, tid)
	}
	view, err := guardValue(func() (host.StateView, error) { return g.(host.StatefulGraph).GetState(r.Context(), tid) })
	if errors.Is(err, host.ErrThreadNotFound) {
		return emptyState(tid), nil
	}
	if err != nil {
		s.logger.Error("get thread state", "thread_id", tid, "error", err)
		return threadStateBody{}, apierror.New(apierror.ErrInternal, "Internal error retrieving thread state")
	}
	return s.renderState(view, tid)
}

// renderState is threadState for the state routes: an encoding failure is logged and is a 500.
func (s *Service) renderState(view host.StateView, tid string) (threadStateBody, error) {
	st, err := threadState(view, tid)
	if err != nil {
		s.logger.Error("encode thread state", "thread_id", tid, "error", err)
		return threadStateBody{}, apierror.New(apierror.ErrInternal, "Internal error retrieving thread state")
	}
	return st, nil
}

func emptyState(tid string) threadStateBody {
	return threadStateBody{Values: map[string]any{}, Next: []string{}, Checkpoint: checkpointBody{ThreadID: tid},
		Tasks: []any{}, Interrupts: []any{}}
}

// threadState renders a state view: values that are neither an object nor an array become
// {}; empty metadata is null; the checkpoints come from the view's configs.
func threadState(v host.StateView, tid string) (threadStateBody, error) {
	st := emptyState(tid)
	raw, err := json.Marshal(v.Values)
	if err != nil {
		return st, err
	}
	if k := kindOf(raw); k == 'o' || k == 'a' {
		st.Values = json.RawMessage(raw)
	}
	if v.Next != nil {
		st.Next = v.Next
	}
	if len(v.Metadata) > 0 {
		st.Metadata = v.Metadata
	}
	if ref, ok := refFromConfig(v.Config, tid); ok {
		st.Checkpoint = checkpointOf(ref)
	}
	if ref, ok := refFromConfig(v.ParentConfig, tid); ok {
		c := checkpointOf(ref)
		st.ParentCheckpoint = &c
	}
	if !v.CreatedAt.IsZero() {
		at := timeText(v.CreatedAt)
		st.CreatedAt = &at
	}
	return st, nil
}

// parseCheckpoint reads a Checkpoint object member (nil when absent or null): its thread_id
// must equal tid (422 with what), and its checkpoint_ns and checkpoint_id are returned.
func parseCheckpoint(obj object, key, tid, what string) (*CheckpointRef, error) {
	raw, err := obj.optObject(key)
	if err != nil || raw == nil {
		return nil, err
	}
	return checkpointFromRaw(raw, key, tid, what)
}

func checkpointFromRaw(raw json.RawMessage, key, tid, what string) (*CheckpointRef, error) {
	var c struct {
		ThreadID     *string `json:"thread_id"`
		CheckpointNS *string `json:"checkpoint_ns"`
		CheckpointID *string `json:"checkpoint_id"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, apierror.Invalid(key, "Input should be a valid checkpoint")
	}
	ref := &CheckpointRef{ThreadID: tid}
	if c.ThreadID != nil && *c.ThreadID != tid {
		return nil, apierror.Newf(apierror.ErrValidation, "%s thread_id %s does not match path thread_id %s", what, repr(*c.ThreadID), repr(tid))
	}
	if c.CheckpointNS != nil {
		ref.NS = *c.CheckpointNS
	}
	if c.CheckpointID != nil {
		ref.ID = *c.CheckpointID
	}
	return ref, nil
}

func (s *Service) serveStateUpdate(w http.ResponseWriter, r *http.Request) {
	ref, err := s.stateUpdate(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		Checkpoint checkpointBody `json:"checkpoint"`
	}{checkpointOf(ref)})
}

func (s *Service) stateUpdate(r *http.Request) (CheckpointRef, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return CheckpointRef{}, err
	}
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return CheckpointRef{}, err
	}
	obj, err := parseBody(body, requiredObject)
	if err != nil {
		return CheckpointRef{}, err
	}
	values, ok := obj["values"]
	if !ok || !validValues(values) {
		return CheckpointRef{}, apierror.Invalid("values", "Input should be a valid dictionary or a list of dictionaries")
	}
	asNode, _, err := obj.optString("as_node")
	if err != nil {
		return CheckpointRef{}, err
	}
	cid, _, err := obj.optString("checkpoint_id")
	if err != nil {
		return CheckpointRef{}, err
	}
	if _, err := obj.optObject("checkpoint"); err != nil {
		return CheckpointRef{}, err
	}
	checked := values
	if kindOf(values) == 'a' {
		checked = json.RawMessage(`{"items": ` + string(values) + `}`)
	}
	if err := checkLimits(checked, s.maxDepth, s.maxNodes); err != nil {
		return CheckpointRef{}, err
	}
	g, err := s.resolveGraph(r, tid, "state updates", func(g host.InvocableGraph) bool { _, ok := g.(StateUpdater); return ok })
	if err != nil {
		return CheckpointRef{}, err
	}
	ref, err := parseCheckpoint(obj, "checkpoint", tid, "Checkpoint")
	if err != nil {
		return CheckpointRef{}, err
	}
	if ref == nil {
		ref = &CheckpointRef{ThreadID: tid, ID: cid}
	}
	out, err := guardValue(func() (CheckpointRef, error) {
		return g.(StateUpdater).UpdateState(r.Context(), tid, StateUpdate{Values: values, AsNode: asNode, Checkpoint: *ref})
	})
	if errors.Is(err, host.ErrThreadNotFound) {
		return CheckpointRef{}, apierror.Newf(apierror.ErrNotFound, "Cannot update state for thread %s: %s", repr(tid), err.Error())
	}
	if err != nil {
		s.logger.Error("update thread state", "thread_id", tid, "error", err)
		return CheckpointRef{}, apierror.New(apierror.ErrInternal, "Internal error updating thread state")
	}
	if out.ThreadID == "" {
		out.ThreadID = tid
	}
	return out, nil
}

// validValues reports an object or an array of objects.
func validValues(v json.RawMessage) bool {
	switch kindOf(v) {
	case 'o':
		return true
	case 'a':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return false
		}
		for _, it := range items {
			if kindOf(it) != 'o' {
				return false
			}
		}
		return true
	}
	return false
}

func (s *Service) serveHistory(w http.ResponseWriter, r *http.Request) {
	out, err := s.history(r)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeHistory(w, r, out)
}

func (s *Service) history(r *http.Request) ([]threadStateBody, error) {
	tid, err := pathThreadID(r)
	if err != nil {
		return nil, err
	}
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return nil, err
	}
	obj, err := parseBody(body, emptyOKObject)
	if err != nil {
		return nil, err
	}
	limit, err := obj.optInt("limit", 10, 1)
	if err != nil {
		return nil, err
	}
	var beforeRaw json.RawMessage
	if obj.has("before") {
		beforeRaw = obj["before"]
		if k := kindOf(beforeRaw); k != 's' && k != 'o' {
			return nil, apierror.Invalid("before", "Input should be a valid string or checkpoint")
		}
	}
	meta, err := obj.optObject("metadata")
	if err != nil {
		return nil, err
	}
	if _, err := obj.optObject("checkpoint"); err != nil {
		return nil, err
	}
	if meta != nil {
		if err := checkLimits(meta, s.maxDepth, s.maxNodes); err != nil {
			return nil, err
		}
	}
	g, err := s.resolveGraph(r, tid, "state history", func(g host.InvocableGraph) bool { _, ok := g.(StateHistorian); return ok })
	if err != nil {
		return nil, err
	}
	ref, err := parseCheckpoint(obj, "checkpoint", tid, "Checkpoint")
	if err != nil {
		return nil, err
	}
	if ref == nil {
		ref = &CheckpointRef{ThreadID: tid}
	}
	before := ""
	switch kindOf(beforeRaw) {
	case 's':
		_ = json.Unmarshal(beforeRaw, &before)
	case 'o':
		b, err := checkpointFromRaw(beforeRaw, "before", tid, "before checkpoint")
		if err != nil {
			return nil, err
		}
		before = b.ID
	}
	views, err := guardValue(func() ([]host.StateView, error) { return g.(StateHistorian).GetStateHistory(r.Context(), *ref) })
	if errors.Is(err, host.ErrThreadNotFound) {
		return []threadStateBody{}, nil
	}
	if err != nil {
		s.logger.Error("get thread history", "thread_id", tid, "error", err)
		return nil, apierror.New(apierror.ErrInternal, "Internal error retrieving thread history")
	}
	return filterHistory(views, tid, before, decodeMap(meta), limit)
}

// filterHistory skips views up to and including the one whose id is before (unknown → none),
// keeps those whose metadata matches every filter key, and stops at limit.
func filterHistory(views []host.StateView, tid, before string, meta map[string]any, limit int) ([]threadStateBody, error) {
	out := []threadStateBody{}
	skipping := before != ""
	filter := threads.Query{Metadata: meta}
	for _, v := range views {
		st, err := threadState(v, tid)
		if err != nil {
			return nil, apierror.New(apierror.ErrInternal, "Internal error retrieving thread history")
		}
		if skipping {
			if st.Checkpoint.CheckpointID != nil && *st.Checkpoint.CheckpointID == before {
				skipping = false
			}
			continue
		}
		if !filter.Matches(threads.Thread{Metadata: v.Metadata}) {
			continue
		}
		out = append(out, st)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}
