package platformruns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/platform"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
)

// Assistants serves durable graphs as platform assistants on the engine
// (platform.DurableAssistants). A thread has at most one durable run at a time: its
// instance id is derived from the thread id (InstanceID), so the binding needs no storage
// of its own and survives restarts. A new run on a thread whose run finished replaces it;
// one on a thread whose run waits for an event is refused (409): resume it instead.
type Assistants struct {
	eng    Engine
	graphs []host.GraphInfo
}

var (
	_ platform.DurableAssistants = (*Assistants)(nil)
	_ platform.ThreadDeleter     = (*Assistants)(nil)
)

// NewAssistants returns the durable assistants of graphs (typically the public graphs of the
// engine's registry; a name listed twice counts once), run on eng.
func NewAssistants(eng Engine, graphs []durable.Graph) *Assistants {
	a := &Assistants{eng: eng}
	for _, g := range graphs {
		m := g.Manifest()
		if slices.ContainsFunc(a.graphs, func(i host.GraphInfo) bool { return i.Name == m.GraphName }) {
			continue
		}
		info := host.GraphInfo{Name: m.GraphName, HasCheckpointer: true}
		if d, ok := m.Metadata["description"].(string); ok {
			info.Description = &d
		}
		a.graphs = append(a.graphs, info)
	}
	return a
}

// InstanceID is the engine instance id of thread tid's durable run (runsapi.ThreadRunID):
// "thread-<tid>", or "thread~<first 32 hex digits of sha256(tid)>" when that is not a valid
// instance id. The runs API reserves these ids, and distinct threads get distinct ids.
func InstanceID(tid string) string { return runsapi.ThreadRunID(tid) }

// threadRun returns thread tid's durable run and its id, or engine.ErrRunNotFound. A run
// counts as the thread's only when it was started for it (its metadata's thread_id is tid):
// a thread never adopts a run it did not start, such as one a runs API caller started at the
// thread's id before ids were reserved.
func (a *Assistants) threadRun(ctx context.Context, tid string) (engine.Run, string, error) {
	id := InstanceID(tid)
	run, err := a.eng.GetRun(ctx, id)
	if err != nil {
		return engine.Run{}, id, err
	}
	if runThreadID(run.Input.Metadata) != tid {
		return engine.Run{}, id, engine.ErrRunNotFound
	}
	return run, id, nil
}

// runThreadID is the thread_id recorded in a run's metadata (runMetadata), or "".
func runThreadID(meta json.RawMessage) string {
	var m struct {
		ThreadID *string `json:"thread_id"`
	}
	if json.Unmarshal(meta, &m) != nil || m.ThreadID == nil {
		return ""
	}
	return *m.ThreadID
}

// Graphs implements platform.DurableAssistants.
func (a *Assistants) Graphs() []host.GraphInfo { return slices.Clone(a.graphs) }

// Run implements platform.DurableAssistants.
func (a *Assistants) Run(ctx context.Context, req platform.DurableRunRequest) (platform.DurableState, error) {
	if req.Resume != nil {
		return a.resume(ctx, req.ThreadID, req.Resume)
	}
	id, err := a.start(ctx, req)
	if err != nil {
		return platform.DurableState{}, err
	}
	run, err := a.eng.WaitRun(ctx, id, engine.RunSettled)
	if err != nil {
		return platform.DurableState{}, fmt.Errorf("wait for durable run: %w", err)
	}
	return a.state(ctx, run)
}

// start starts thread req.ThreadID's durable run and returns its id.
func (a *Assistants) start(ctx context.Context, req platform.DurableRunRequest) (string, error) {
	id := InstanceID(req.ThreadID)
	_, err := a.eng.StartRun(ctx, engine.StartRunRequest{GraphName: req.Graph, InstanceID: id, Input: req.Input,
		Metadata: runMetadata(req)})
	var exists *engine.RunExistsError
	switch {
	case errors.As(err, &exists):
		return "", &host.ClientError{Status: http.StatusConflict, Err: err,
			Message: fmt.Sprintf("Thread %s has a durable run in progress; resume it with command.resume", pyjson.Repr(req.ThreadID))}
	case errors.Is(err, engine.ErrInvalidRunInput) || errors.Is(err, durable.ErrInvalidState):
		return "", &host.ClientError{Status: http.StatusUnprocessableEntity, Err: err, Message: err.Error()}
	case err != nil:
		return "", fmt.Errorf("start durable run: %w", err)
	}
	return id, nil
}

// runMetadata is the metadata of thread's new durable run: {"thread_id": <id>}, and, under
// per-user isolation, "owner": the thread's owner (as the runs API records a caller's run),
// so the runs API shows the run to that owner.
func runMetadata(req platform.DurableRunRequest) json.RawMessage {
	m := `{"thread_id":` + strconv.Quote(req.ThreadID)
	if req.Owner != "" {
		owner, _ := json.Marshal(req.Owner) // a string always encodes
		m += `,"` + isolation.OwnerKey + `":` + string(owner)
	}
	return json.RawMessage(m + "}")
}

// resume delivers payload as the event the run waits for and waits until the run applied it
// and settled again.
func (a *Assistants) resume(ctx context.Context, tid string, payload json.RawMessage) (platform.DurableState, error) {
	id, last, err := a.raise(ctx, tid, payload)
	if err != nil {
		return platform.DurableState{}, err
	}
	return a.waitApplied(ctx, id, last)
}

// waitApplied waits until run id applied the event raised after its history row last and
// settled again, and returns its state.
func (a *Assistants) waitApplied(ctx context.Context, id string, last int64) (platform.DurableState, error) {
	// The run settles again once its history shows the event applied; a head read before
	// that history read may be stale, so the next head read decides.
	var waitErr error
	applied := false
	run, err := a.eng.WaitRun(ctx, id, func(r engine.Run) bool {
		if r.RuntimeStatus.Finished() || waitErr != nil {
			return true
		}
		if applied || !engine.RunSettled(r) {
			return applied && engine.RunSettled(r)
		}
		rows, err := a.history(ctx, id)
		if err != nil {
			waitErr = err
			return true
		}
		applied = slices.ContainsFunc(rows, func(h engine.HistoryEvent) bool {
			return h.Sequence > last && h.Type == engine.HistoryEventApplied
		})
		return false
	})
	if err == nil {
		err = waitErr
	}
	if err != nil {
		return platform.DurableState{}, fmt.Errorf("wait for durable run: %w", err)
	}
	return a.state(ctx, run)
}

// raise delivers payload as the event thread tid's run waits for and returns the run's id and
// the sequence number of its last history row before the event: the event is applied once a
// later row says so.
func (a *Assistants) raise(ctx context.Context, tid string, payload json.RawMessage) (string, int64, error) {
	id, event, last, err := a.pending(ctx, tid)
	if err != nil {
		return "", 0, err
	}
	return id, last, a.deliver(ctx, id, event, payload)
}

// pending returns thread tid's run's id, the event it waits for and the sequence number of its
// last history row; platform.ErrNoPendingInterrupt when it has no run or its run waits for
// nothing.
func (a *Assistants) pending(ctx context.Context, tid string) (id, event string, last int64, err error) {
	run, id, err := a.threadRun(ctx, tid)
	if errors.Is(err, engine.ErrRunNotFound) {
		return "", "", 0, platform.ErrNoPendingInterrupt
	}
	if err != nil {
		return "", "", 0, fmt.Errorf("get durable run: %w", err)
	}
	event, ok := run.WaitingFor()
	if !ok {
		return "", "", 0, platform.ErrNoPendingInterrupt
	}
	rows, err := a.history(ctx, id)
	if err != nil {
		return "", "", 0, err
	}
	if len(rows) > 0 {
		last = rows[len(rows)-1].Sequence
	}
	return id, event, last, nil
}

// deliver raises event on run id with payload.
func (a *Assistants) deliver(ctx context.Context, id, event string, payload json.RawMessage) error {
	err := a.eng.RaiseEvent(ctx, id, event, payload)
	var fin *engine.RunFinishedError
	switch {
	case errors.As(err, &fin):
		return platform.ErrNoPendingInterrupt
	case errors.Is(err, engine.ErrInvalidEventPayload), errors.Is(err, durable.ErrInvalidEventPayload), errors.Is(err, durable.ErrUnknownEvent):
		// Not JSON, refused by the handler's payload type, or an event the graph cannot take.
		return fmt.Errorf("%w: %w", platform.ErrInvalidResume, err)
	case err != nil:
		return fmt.Errorf("raise %s on durable run: %w", event, err)
	}
	return nil
}

// DeleteThread implements platform.ThreadDeleter: it terminates the thread's durable run when
// it is unfinished (waiting for an event, say) and purges it, so deleting a thread leaves no
// engine run behind. A thread without a durable run is not an error.
func (a *Assistants) DeleteThread(ctx context.Context, threadID string) error {
	_, id, err := a.threadRun(ctx, threadID)
	if errors.Is(err, engine.ErrRunNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get durable run of thread %s: %w", threadID, err)
	}
	var fin *engine.RunFinishedError
	err = a.eng.CancelRun(ctx, id, "thread deleted")
	if errors.Is(err, engine.ErrRunNotFound) || errors.Is(err, engine.ErrInvalidInstanceID) {
		return nil
	}
	if err != nil && !errors.As(err, &fin) {
		return fmt.Errorf("end durable run of thread %s: %w", threadID, err)
	}
	if err := a.eng.PurgeRun(ctx, id); err != nil && !errors.Is(err, engine.ErrRunNotFound) {
		return fmt.Errorf("purge durable run of thread %s: %w", threadID, err)
	}
	return nil
}

// State implements platform.DurableAssistants.
func (a *Assistants) State(ctx context.Context, threadID string) (platform.DurableState, error) {
	run, _, err := a.threadRun(ctx, threadID)
	if errors.Is(err, engine.ErrRunNotFound) {
		return platform.DurableState{}, fmt.Errorf("get durable state: %w", host.ErrThreadNotFound)
	}
	if err != nil {
		return platform.DurableState{}, fmt.Errorf("get durable run: %w", err)
	}
	return a.state(ctx, run)
}

// History implements platform.DurableAssistants: one state per node completed or event
// applied, newest first; the newest carries the run's pending interrupt or failure.
func (a *Assistants) History(ctx context.Context, threadID string) ([]platform.DurableState, error) {
	run, id, err := a.threadRun(ctx, threadID)
	if errors.Is(err, engine.ErrRunNotFound) {
		return nil, fmt.Errorf("get durable history: %w", host.ErrThreadNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get durable run: %w", err)
	}
	rows, err := a.history(ctx, id)
	if err != nil {
		return nil, err
	}
	out, err := states(rows)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 {
		decorate(&out[0], run, rows)
	}
	return out, nil
}

// state is the run's latest state.
func (a *Assistants) state(ctx context.Context, run engine.Run) (platform.DurableState, error) {
	rows, err := a.history(ctx, run.InstanceID)
	if err != nil {
		return platform.DurableState{}, err
	}
	var st platform.DurableState
	all, err := states(rows)
	if err != nil {
		return platform.DurableState{}, err
	}
	if len(all) > 0 {
		st = all[0]
	} else {
		st.Values = run.Input.InitialState
	}
	decorate(&st, run, rows)
	return st, nil
}

// decorate adds the run's pending interrupt or failure to its latest state.
func decorate(st *platform.DurableState, run engine.Run, rows []engine.HistoryEvent) {
	if len(st.Values) == 0 {
		st.Values = json.RawMessage("{}")
	}
	if run.RuntimeStatus == engine.StatusFailed || run.RuntimeStatus == engine.StatusTerminated {
		st.Failed = run.FailureMessage()
	}
	p, ok := run.Progress()
	if !ok || p.WaitingForEvent == "" {
		return
	}
	in := &platform.DurableInterrupt{Event: p.WaitingForEvent, ResumeNode: p.ResumeNode}
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Type == engine.HistoryWaitStarted {
			in.ID = run.InstanceID + ":" + strconv.FormatInt(rows[i].Sequence, 10)
			if i > 0 && rows[i-1].Type == engine.HistoryRouteResolved { // the wait's decision: its note
				var d struct {
					Note string `json:"note"`
				}
				if json.Unmarshal(rows[i-1].Data, &d) == nil {
					in.Note = d.Note
				}
			}
			break
		}
	}
	st.Interrupt = in
}

// states are the states recorded in rows, the run's whole history oldest first, newest first:
// one per node_completed or event_applied row, rebuilt from the history (engine.FoldState),
// so a graph whose rows record what each step changed shows its whole states too.
func states(rows []engine.HistoryEvent) ([]platform.DurableState, error) {
	var out []platform.DurableState
	var s json.RawMessage
	for _, h := range rows {
		next, recorded, err := engine.FoldState(s, h)
		if err != nil {
			return nil, fmt.Errorf("read durable history: %w", err)
		}
		s = next
		if !recorded || h.Type != engine.HistoryNodeCompleted && h.Type != engine.HistoryEventApplied {
			continue
		}
		out = append(out, platform.DurableState{ID: strconv.FormatInt(h.Sequence, 10), Node: h.Node, Values: s, At: h.Timestamp})
	}
	slices.Reverse(out)
	return out, nil
}

// history reads the run's whole history, oldest first.
func (a *Assistants) history(ctx context.Context, id string) ([]engine.HistoryEvent, error) {
	var rows []engine.HistoryEvent
	token := ""
	for {
		page, err := a.eng.History(ctx, id, token, 1000)
		if err != nil {
			return nil, fmt.Errorf("read durable history: %w", err)
		}
		rows = append(rows, page.Events...)
		if page.ContinuationToken == "" {
			return rows, nil
		}
		token = page.ContinuationToken
	}
}
