package runsapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Response bodies of the run endpoints, fields in wire order.
type (
	managementPayload struct {
		ID                string `json:"id"`
		StatusQueryGetURI string `json:"statusQueryGetUri"`
		SendEventPostURI  string `json:"sendEventPostUri"`
		TerminatePostURI  string `json:"terminatePostUri"`
	}
	runStatusBody struct {
		InstanceID    string           `json:"instance_id"`
		RuntimeStatus engine.RunStatus `json:"runtime_status"`
		CustomStatus  json.RawMessage  `json:"custom_status"`
		Input         engine.RunInput  `json:"input"`
		Output        json.RawMessage  `json:"output"`
		// The links of child runs (durable.StartChild), written only when there are some.
		ParentInstanceID string   `json:"parent_instance_id,omitempty"`
		ChildInstanceIDs []string `json:"child_instance_ids,omitempty"`
		// The run's search keys (searchkeys.go), written only when it has some.
		SearchKeys map[string]string `json:"search_keys,omitempty"`
		// What a Running run waits for (engine/run_activity.go), written only when it does.
		SleepingUntil    string            `json:"sleeping_until,omitempty"`
		NodeRetry        *retryBody        `json:"node_retry,omitempty"`
		BranchesRetrying []branchRetryBody `json:"branches_retrying,omitempty"`
		// The run's generation (durable.ContinueAsNew), written once it has continued.
		Generation int64 `json:"generation,omitempty"`
	}
	retryBody struct {
		Attempt int    `json:"attempt"`
		RetryAt string `json:"retry_at"`
	}
	branchRetryBody struct {
		Index   int    `json:"index"`
		Attempt int    `json:"attempt"`
		RetryAt string `json:"retry_at"`
	}
	eventAcceptedBody struct {
		InstanceID string `json:"instance_id"`
		EventName  string `json:"event_name"`
		Accepted   bool   `json:"accepted"`
	}
	cancelAcceptedBody struct {
		InstanceID string `json:"instance_id"`
		Terminated bool   `json:"terminated"`
		Reason     string `json:"reason"`
	}
	purgedBody struct {
		InstanceID string `json:"instance_id"`
		Purged     bool   `json:"purged"`
	}
	runSummary struct {
		InstanceID    string           `json:"instance_id"`
		RuntimeStatus engine.RunStatus `json:"runtime_status"`
		GraphName     string           `json:"graph_name"`
		GraphVersion  string           `json:"graph_version"`
		GraphHash     string           `json:"graph_hash"`
		CreatedAt     string           `json:"created_at"`
		LastUpdatedAt string           `json:"last_updated_at"`
	}
	runListBody struct {
		Runs              []runSummary `json:"runs"`
		ContinuationToken *string      `json:"continuation_token"`
	}
	historyEventBody struct {
		Sequence  int64           `json:"sequence"`
		Type      string          `json:"type"`
		Name      *string         `json:"name"`
		Node      *string         `json:"node"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	historyBody struct {
		InstanceID        string             `json:"instance_id"`
		Events            []historyEventBody `json:"events"`
		ContinuationToken *string            `json:"continuation_token"`
	}
	healthBody struct {
		OK               bool               `json:"ok"`
		RegisteredGraphs []manifestFragment `json:"registered_graphs"`
	}
)

// startRun serves POST /api/graphs/{graph_name}/runs. Checks, in order: unknown graph and the
// memory budget (Options.MemoryBudget; both before the body is read), body, input/metadata,
// instance_id (valid, and not reserved for threads, ReservedInstanceID, or for child runs,
// engine.ChildRunPrefix), existing unfinished run.
func (s *Service) startRun(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("graph_name")
	if _, err := s.reg.Latest(name); err != nil {
		return graphLookupError(name, err)
	}
	if s.reg.Internal(name) {
		return &graphNotFoundError{name: name}
	}
	if err := apierror.NewWorkRefused(r.Context(), s.opts.MemoryBudget, r, s.opts.MaxRequestBodyBytes); err != nil {
		return err // the budget cannot take the run: refused unread
	}
	body, err := apiReadBody(w, r, s.opts.MaxRequestBodyBytes)
	if err != nil {
		return err
	}
	req, err := decodeStartRunBody(body, s.opts.MaxInputDepth)
	if err != nil {
		return err
	}
	if ReservedInstanceID(req.InstanceID) {
		return errReservedID
	}
	if strings.HasPrefix(req.InstanceID, engine.ChildRunPrefix) {
		return errChildID
	}
	if err := s.checkStartID(r.Context(), req.InstanceID); err != nil {
		return err
	}
	if req.Metadata, err = s.ownedMetadata(r.Context(), req.Metadata); err != nil {
		return err
	}
	run, err := s.runs.StartRun(r.Context(), engine.StartRunRequest{GraphName: name, InstanceID: req.InstanceID, Input: req.Input, Metadata: req.Metadata,
		SearchKeys: req.SearchKeys})
	if err != nil {
		return graphLookupError(name, err)
	}
	s.logger.InfoContext(r.Context(), "durable run started", "run_id", run.InstanceID, "graph", name)
	runURL := s.runURL(r, run.InstanceID)
	w.Header().Set("Location", runURL)
	w.Header().Set("Retry-After", "10")
	apiWriteJSON(w, http.StatusAccepted, managementPayload{
		ID: run.InstanceID, StatusQueryGetURI: runURL,
		SendEventPostURI: runURL + "/events/{eventName}", TerminatePostURI: runURL + "/cancel",
	}, s.logger)
	return nil
}

// graphLookupError turns an unknown-graph error into the endpoint's 404 for name.
func graphLookupError(name string, err error) error {
	if errors.Is(err, durable.ErrUnknownGraph) {
		return &graphNotFoundError{name: name}
	}
	return err
}

// getStatus serves GET /api/runs/{instance_id}.
func (s *Service) getStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	var run engine.Run
	if d, ok := s.runs.(engine.RunDetailer); ok {
		run, err = d.GetRunDetail(r.Context(), id) // with the branches waiting to retry
	} else {
		run, err = s.runs.GetRun(r.Context(), id)
	}
	if err != nil {
		return err
	}
	if err := s.publicRun(r.Context(), run); err != nil {
		return err
	}
	return s.writeHeld(w, r, http.StatusOK, statusBodyOf(run), 0)
}

// statusBodyOf is the status body of run.
func statusBodyOf(run engine.Run) runStatusBody {
	b := runStatusBody{
		InstanceID: run.InstanceID, RuntimeStatus: run.RuntimeStatus, CustomStatus: run.CustomStatus,
		Input: run.Input, Output: run.Output, ParentInstanceID: run.ParentInstanceID, ChildInstanceIDs: run.ChildInstanceIDs,
		SearchKeys: run.SearchKeys,
		Generation: run.Generation,
	}
	if !run.SleepingUntil.IsZero() {
		b.SleepingUntil = apiTime(run.SleepingUntil)
	}
	if nr := run.NodeRetry; nr != nil {
		b.NodeRetry = &retryBody{Attempt: nr.Attempt, RetryAt: apiTime(nr.At)}
	}
	for _, br := range run.BranchRetries {
		b.BranchesRetrying = append(b.BranchesRetrying, branchRetryBody{Index: br.Index, Attempt: br.Attempt, RetryAt: apiTime(br.At)})
	}
	return b
}

// idempotencyKeyHeader names the optional request header of POST
// /api/runs/{id}/events/{event}: a retry carrying the same value as an earlier accepted
// request for the same run is answered 202 again without storing the event twice.
const idempotencyKeyHeader = "Idempotency-Key"

// runID returns the request's instance id, or ErrRunNotFound (404) for an id no run can
// have — checked before anything reaches storage.
func runID(r *http.Request) (string, error) {
	id := r.PathValue("instance_id")
	if !engine.ValidInstanceID(id) {
		return "", engine.ErrRunNotFound
	}
	return id, nil
}

// sendEvent serves POST /api/runs/{instance_id}/events/{event_name}. An event name outside
// engine.ValidEventName is a 400 before anything is read or stored. Any JSON body is
// accepted; an empty one is the payload null, a non-empty one that is not JSON a 400.
func (s *Service) sendEvent(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	if err := s.checkPublicRun(r.Context(), id); err != nil {
		return err
	}
	event := r.PathValue("event_name")
	if !engine.ValidEventName(event) {
		return engine.ErrInvalidEventName
	}
	body, err := apiReadBody(w, r, s.opts.MaxRequestBodyBytes)
	if errors.Is(err, errBodyTooLarge) {
		// The contract's checks come first: unknown run 404, finished run 409; only then
		// the size guard (RaiseEvent makes the same checks on the common path).
		run, gerr := s.runs.GetRun(r.Context(), id)
		switch {
		case gerr != nil:
			return gerr
		case run.RuntimeStatus.Finished():
			return &engine.RunFinishedError{InstanceID: id, Status: run.RuntimeStatus}
		}
	}
	if err != nil {
		return err
	}
	payload, err := decodeEventPayload(body, s.opts.MaxInputDepth)
	if err != nil {
		return err
	}
	var opts []engine.EventOption
	if key := r.Header.Get(idempotencyKeyHeader); key != "" {
		opts = append(opts, engine.WithIdempotencyKey(key))
	}
	if err := s.runs.RaiseEvent(r.Context(), id, event, payload, opts...); err != nil {
		return err
	}
	s.logger.InfoContext(r.Context(), "durable event accepted", "run_id", id, "event", event)
	apiWriteJSON(w, http.StatusAccepted, eventAcceptedBody{InstanceID: id, EventName: event, Accepted: true}, s.logger)
	return nil
}

// cancelRun serves POST /api/runs/{instance_id}/cancel. Checks, in order: unknown run, a
// non-string reason, finished run.
func (s *Service) cancelRun(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	if run, err := s.runs.GetRun(r.Context(), id); err != nil {
		return err
	} else if err := s.publicRun(r.Context(), run); err != nil {
		return err
	}
	body, err := apiReadBody(w, r, s.opts.MaxRequestBodyBytes)
	if err != nil {
		return err
	}
	reason, err := decodeCancelReason(body)
	if err != nil {
		return err
	}
	if err := s.runs.CancelRun(r.Context(), id, reason); err != nil {
		return err
	}
	s.logger.InfoContext(r.Context(), "durable run cancel accepted", "run_id", id)
	apiWriteJSON(w, http.StatusAccepted, cancelAcceptedBody{InstanceID: id, Terminated: true, Reason: reason}, s.logger)
	return nil
}

// listRuns serves GET /api/runs. Under isolation a caller other than the master key lists
// the runs of their own identity only, read from the engine's owner index (RunQuery.Owner):
// no page, token or count stems from another identity's runs.
func (s *Service) listRuns(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	q, err := parseRunQuery(r.URL.Query())
	if err != nil {
		return err
	}
	scope := s.listScope(ctx)
	if q.ContinuationToken, err = s.openToken(ctx, scope, q.ContinuationToken); err != nil {
		return err
	}
	c := s.caller(ctx)
	q.Owner = c.ID
	if c.Admin {
		q.Owner = ""
	}
	var list engine.RunList
	// A caller without an identity owns nothing (and "" would list every owner's runs).
	if !s.reg.Internal(q.GraphName) && (c.Admin || c.ID != "") {
		if list, err = s.runs.ListRuns(ctx, q); err != nil {
			return err
		}
		list.Runs = s.publicRuns(ctx, list.Runs)
	}
	token, err := s.sealToken(ctx, scope, list.ContinuationToken)
	if err != nil {
		return err
	}
	out := runListBody{Runs: make([]runSummary, len(list.Runs)), ContinuationToken: token}
	for i, run := range list.Runs {
		out.Runs[i] = runSummary{
			InstanceID: run.InstanceID, RuntimeStatus: run.RuntimeStatus, GraphName: run.GraphName,
			GraphVersion: run.GraphVersion, GraphHash: run.GraphHash,
			CreatedAt: apiTime(run.CreatedAt), LastUpdatedAt: apiTime(run.UpdatedAt),
		}
	}
	return s.writeHeld(w, r, http.StatusOK, out, int64(len(out.Runs))*runSummaryBytes)
}

// getHistory serves GET /api/runs/{instance_id}/history.
func (s *Service) getHistory(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	limit, err := parseLimit(r.URL.Query())
	if err != nil {
		return err
	}
	gen, err := parseGeneration(r.URL.Query())
	if err != nil {
		return err
	}
	if err := s.checkPublicRun(r.Context(), id); err != nil {
		return err
	}
	scope := historyScope(id) + gen.scope()
	token, err := s.openToken(r.Context(), scope, r.URL.Query().Get("continuation_token"))
	if err != nil {
		return err
	}
	hold, err := s.responses.Hold(membudget.OwnerOf(r.Context()), 0)
	if err != nil {
		return err
	}
	defer hold.Release()
	h, err := s.loadHistory(r.Context(), hold, id, gen, token, limit) // counted as its rows load
	if err != nil {
		return err
	}
	next, err := s.sealToken(r.Context(), scope, h.ContinuationToken)
	if err != nil {
		return err
	}
	out := historyBody{InstanceID: id, Events: make([]historyEventBody, len(h.Events)), ContinuationToken: next}
	for i, e := range h.Events {
		data := e.Data
		if len(data) == 0 {
			data = json.RawMessage("null")
		}
		out.Events[i] = historyEventBody{
			Sequence: e.Sequence, Type: e.Type, Name: nullable(e.Name), Node: nullable(e.Node),
			Timestamp: apiTime(e.Timestamp), Data: data,
		}
	}
	return s.writeSettled(w, r, hold, http.StatusOK, out)
}

// purgeRun serves DELETE /api/runs/{instance_id}.
func (s *Service) purgeRun(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	if err := s.checkPublicRun(r.Context(), id); err != nil {
		return err
	}
	if err := s.runs.PurgeRun(r.Context(), id); err != nil {
		return err
	}
	s.logger.InfoContext(r.Context(), "durable run purged", "run_id", id)
	apiWriteJSON(w, http.StatusOK, purgedBody{InstanceID: id, Purged: true}, s.logger)
	return nil
}

// health serves GET /api/health when the service runs alone.
func (s *Service) health(w http.ResponseWriter, _ *http.Request) error {
	apiWriteJSON(w, http.StatusOK, healthBody{OK: true, RegisteredGraphs: fragments(s.reg)}, s.logger)
	return nil
}

// openAPI serves GET /api/openapi.json.
func (s *Service) openAPI(w http.ResponseWriter, _ *http.Request) error {
	apiWriteJSON(w, http.StatusOK, s.openAPIDocument(), s.logger)
	return nil
}

// nullable is nil for "" and &s otherwise.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// apiTime writes t in UTC RFC 3339 with nanoseconds, or "" for the zero time.
func apiTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
