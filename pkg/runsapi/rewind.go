package runsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// Rewind routes, served when Options.Runs is an engine.Rewinder, as the engine is:
//
//	POST /api/runs/{instance_id}/rewind  {"reason": "..."} (optional)
//	  → 202 with the run's status body and a Location naming its status URL; 404 for an
//	    unknown run (or another identity's, under isolation), 409 for a run not Failed.
//	POST /api/runs/rewind  {"graph_name", "failed_after", "failed_before", "limit", "reason",
//	                        "continuation_token"}
//	  → 200 {"rewound": [ids], "continuation_token": "..." (absent when done)}; under
//	    isolation a caller rewinds its own runs only, the master key every identity's.

// Function names of the rewind routes.
const (
	FuncRewindRun  = "rewind_run"
	FuncRewindRuns = "rewind_runs"
)

// rewindFunctions are the rewind routes when Runs can rewind.
func (s *Service) rewindFunctions(auth funchost.AuthLevel) []funchost.HTTPFunction {
	if _, ok := s.runs.(engine.Rewinder); !ok {
		return nil
	}
	post := []string{http.MethodPost}
	return []funchost.HTTPFunction{
		{Name: FuncRewindRuns, Methods: post, Route: "runs/rewind", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.rewindRuns)), Doc: funchost.RouteDoc{Summary: "Rewind the runs that failed in a window", Tags: []string{"runs"},
				Description: "Rewinds, oldest failure first, the Failed runs that failed at or after failed_after and before failed_before (of graph_name, when given): at most limit (1-100, default 100) failures per call, read from the failure index, never a scan of the runs. Send continuation_token back with the same body to go on. A run is rewound once per failure; under isolation a caller rewinds its own runs only.",
				Request:     openapi.Ref("RewindRunsRequest"), Response: openapi.Ref("RewindRunsResult"), Errors: routeErrors(400, 413, 503)}},
		{Name: FuncRewindRun, Methods: post, Route: "runs/{instance_id}/rewind", AuthLevel: auth,
			Handler: s.handle(s.isolate(s.rewindRun)), Doc: funchost.RouteDoc{Summary: "Rewind a failed run", Tags: []string{"runs"},
				Description: "A Failed run continues from the step that failed, on the graph version it is pinned to: its history is kept and the rewind recorded in it (run_rewound); the failed step runs again with fresh attempts, committed steps do not. 409 for a run that is not Failed.",
				Request:     openapi.Ref("RewindRequest"), RequestOptional: true, Response: openapi.Ref("RunStatus"),
				Status: http.StatusAccepted, Errors: routeErrors(400, 404, 409, 413, 503)}},
	}
}

// rewindSchemas are the bodies of the rewind routes (components.schemas).
func rewindSchemas() openapi.Object {
	return openapi.Object{
		{Key: "RewindRequest", Value: oasObj(nil, openapi.Object{{Key: "reason", Value: oasSchema{"type": "string", "description": "Recorded in the run's history (run_rewound)."}}})},
		{Key: "RewindRunsRequest", Value: oasObj([]string{"failed_after"}, openapi.Object{
			{Key: "graph_name", Value: oasStr()},
			{Key: "failed_after", Value: oasSchema{"type": "string", "format": "date-time", "description": "Inclusive."}},
			{Key: "failed_before", Value: oasSchema{"type": "string", "format": "date-time", "description": "Exclusive; absent: the time of the first call (its continuation token keeps it)."}},
			{Key: "limit", Value: oasSchema{"type": "integer", "minimum": 1, "maximum": engine.MaxRewindLimit, "default": engine.MaxRewindLimit}},
			{Key: "reason", Value: oasStr()},
			{Key: "continuation_token", Value: oasStr()},
		})},
		{Key: "RewindRunsResult", Value: oasObj([]string{"rewound"}, openapi.Object{
			{Key: "rewound", Value: oasArrayOf(oasStr())},
			{Key: "continuation_token", Value: oasSchema{"type": "string", "description": "Absent once the window is done."}},
		})},
	}
}

// rewindRun serves POST /api/runs/{instance_id}/rewind. Checks, in order: unknown run (or
// another identity's), a body that is not an object with a string reason, a run not Failed.
func (s *Service) rewindRun(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if run, err := s.runs.GetRun(ctx, id); err != nil {
		return err
	} else if err := s.publicRun(ctx, run); err != nil {
		return err
	}
	body, err := apiReadBody(w, r, s.opts.MaxRequestBodyBytes)
	if err != nil {
		return err
	}
	reason, err := decodeRewindReason(body)
	if err != nil {
		return err
	}
	if err := s.runs.(engine.Rewinder).RewindRun(ctx, id, reason); err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "durable run rewound", "run_id", id)
	run, err := s.runs.GetRun(ctx, id)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.runURL(r, id))
	apiWriteJSON(w, http.StatusAccepted, statusBodyOf(run), s.logger)
	return nil
}

// decodeRewindReason returns the reason of a rewind's body: "" for an empty body or none
// given; errReasonNotString for a reason that is not a string, errBodyNotObject for a body
// that is not a JSON object.
func decodeRewindReason(body []byte) (string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", nil
	}
	fields, ok := apiDecodeObject(body)
	if !ok {
		return "", errBodyNotObject
	}
	raw, present := fields["reason"]
	if !present || string(bytes.TrimSpace(raw)) == "null" {
		return "", nil
	}
	var reason string
	if bytes.TrimSpace(raw)[0] != '"' || json.Unmarshal(raw, &reason) != nil {
		return "", errReasonNotString
	}
	return reason, nil
}

// rewindRunsRequest is the body of POST /api/runs/rewind.
type rewindRunsRequest struct {
	GraphName         *string `json:"graph_name"`
	FailedAfter       *string `json:"failed_after"`
	FailedBefore      *string `json:"failed_before"`
	Limit             *int    `json:"limit"`
	Reason            *string `json:"reason"`
	ContinuationToken *string `json:"continuation_token"`
}

// rewindRunsBody is the answer of POST /api/runs/rewind.
type rewindRunsBody struct {
	Rewound           []string `json:"rewound"`
	ContinuationToken *string  `json:"continuation_token,omitempty"`
}

// decodeRewindFilter reads the body of POST /api/runs/rewind: a JSON object with only the
// documented members, failed_after required.
func decodeRewindFilter(body []byte) (engine.RewindFilter, string, error) {
	var f engine.RewindFilter
	if _, ok := apiDecodeObject(body); !ok {
		return f, "", errBodyNotObject
	}
	var req rewindRunsRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return f, "", &apiBodyError{msg: "invalid request body: " + jsonFieldProblem(err)}
	}
	if req.GraphName != nil {
		if f.GraphName = *req.GraphName; f.GraphName != "" && !engine.ValidGraphName(f.GraphName) {
			return f, "", &apiBodyError{msg: "invalid graph_name: want 1 to 256 characters without / \\ # ? or control characters"}
		}
	}
	parse := func(name string, v *string) (time.Time, error) {
		if v == nil || *v == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, *v)
		if err != nil {
			return time.Time{}, &apiBodyError{msg: fmt.Sprintf("invalid %s: want an RFC 3339 time such as 2025-01-02T15:04:05Z", name)}
		}
		if t.Before(engine.MinCreatedFilter) || t.After(engine.MaxCreatedFilter) {
			return time.Time{}, &apiBodyError{msg: fmt.Sprintf("invalid %s: %s", name, timeRangeWant)}
		}
		return t, nil
	}
	var err error
	if f.FailedAfter, err = parse("failed_after", req.FailedAfter); err != nil {
		return f, "", err
	}
	if f.FailedAfter.IsZero() {
		return f, "", &apiBodyError{msg: "failed_after is required: an RFC 3339 time"}
	}
	if f.FailedBefore, err = parse("failed_before", req.FailedBefore); err != nil {
		return f, "", err
	}
	if !f.FailedBefore.IsZero() && !f.FailedAfter.Before(f.FailedBefore) {
		return f, "", &apiBodyError{msg: "invalid failed_after: must be before failed_before"}
	}
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > engine.MaxRewindLimit {
			return f, "", &apiBodyError{msg: fmt.Sprintf("invalid limit: want 1 to %d", engine.MaxRewindLimit)}
		}
		f.Limit = *req.Limit
	}
	if req.Reason != nil {
		f.Reason = *req.Reason
	}
	tok := ""
	if req.ContinuationToken != nil {
		tok = *req.ContinuationToken
	}
	return f, tok, nil
}

// jsonFieldProblem names what encoding/json found wrong with a member of the body.
func jsonFieldProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("'%s' must be a %s", te.Field, te.Type.String())
	}
	return err.Error() // "json: unknown field \"x\"" and the like
}

// rewindScope is what a continuation token of POST /api/runs/rewind is bound to: the caller's
// scope and the filter's window and graph, so a token goes on with the call that made it only.
func rewindScope(listScope string, f engine.RewindFilter) string {
	return "rewind\x00" + listScope + "\x00" + f.GraphName + "\x00" + f.FailedAfter.UTC().Format(time.RFC3339Nano) + "\x00" +
		f.FailedBefore.UTC().Format(time.RFC3339Nano)
}

// rewindRuns serves POST /api/runs/rewind. Under isolation a caller other than the master key
// rewinds the runs of their own identity only, read from the owner's failure index.
func (s *Service) rewindRuns(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	body, err := apiReadBody(w, r, s.opts.MaxRequestBodyBytes)
	if err != nil {
		return err
	}
	f, tok, err := decodeRewindFilter(body)
	if err != nil {
		return err
	}
	scope := rewindScope(s.listScope(ctx), f)
	if f.ContinuationToken, err = s.openToken(ctx, scope, tok); err != nil {
		return err
	}
	c := s.caller(ctx)
	if !c.Admin {
		f.Owner = c.ID
	}
	for _, g := range s.reg.List() {
		if name := g.Manifest().GraphName; s.reg.Internal(name) {
			f.ExceptGraphs = append(f.ExceptGraphs, name)
		}
	}
	res := engine.RewindResult{Rewound: []string{}}
	// A caller without an identity owns nothing (and "" would rewind every owner's runs).
	if !s.reg.Internal(f.GraphName) && (c.Admin || c.ID != "") {
		if res, err = s.runs.(engine.Rewinder).RewindRuns(ctx, f); err != nil {
			return err
		}
	}
	next, err := s.sealToken(ctx, scope, res.ContinuationToken)
	if err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "durable runs rewound", "graph", f.GraphName, "rewound", len(res.Rewound))
	apiWriteJSON(w, http.StatusOK, rewindRunsBody{Rewound: res.Rewound, ContinuationToken: next}, s.logger)
	return nil
}
