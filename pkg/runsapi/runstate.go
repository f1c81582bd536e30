package runsapi

import (
	"encoding/json"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// FuncGetRunState is served when Options.Runs is an engine.RunStateReader, as the engine is:
// GET /api/runs/{instance_id}/state, a run's current state and where it stands.
const FuncGetRunState = "get_run_state"

// runStateBody is the answer of GET /api/runs/{instance_id}/state, fields in wire order.
type runStateBody struct {
	InstanceID    string           `json:"instance_id"`
	GraphName     string           `json:"graph_name"`
	RuntimeStatus engine.RunStatus `json:"runtime_status"`
	State         json.RawMessage  `json:"state"`
	Step          int64            `json:"step"`
	Generation    int64            `json:"generation"`
	At            runPositionBody  `json:"at"`
}

// runPositionBody is where a run stands; the members after waiting_for only while they apply.
type runPositionBody struct {
	Nodes           []string         `json:"nodes"`
	WaitingFor      []string         `json:"waiting_for"`
	WaitDeadline    string           `json:"wait_deadline,omitempty"`
	WaitingForChild string           `json:"waiting_for_child,omitempty"`
	SleepingUntil   string           `json:"sleeping_until,omitempty"`
	Branches        *branchCountBody `json:"branches,omitempty"`
	RetryAt         string           `json:"retry_at,omitempty"`
}

type branchCountBody struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// stateFunction is the route of a run's state.
func (s *Service) stateFunction(auth funchost.AuthLevel) funchost.HTTPFunction {
	return funchost.HTTPFunction{Name: FuncGetRunState, Methods: []string{http.MethodGet}, Route: "runs/{instance_id}/state", AuthLevel: auth,
		Handler: s.handle(s.isolate(s.getState)), Doc: funchost.RouteDoc{Summary: "Get a run's current state and where it stands", Tags: []string{"runs"},
			Description: "The state after the run's last committed step, read from the run's head (whatever the length of its history), and where it stands: the nodes about to run, the events it waits for, a sleep's end, its fan-out's branches, a failed step's next attempt.",
			Response:    openapi.Ref("RunState"), Errors: routeErrors(404)}}
}

// getState serves GET /api/runs/{instance_id}/state. Under isolation another identity's run,
// and a run of an internal graph, answer 404 as a run that does not exist.
func (s *Service) getState(w http.ResponseWriter, r *http.Request) error {
	id, err := runID(r)
	if err != nil {
		return err
	}
	reader, ok := s.runs.(engine.RunStateReader)
	if !ok {
		return engine.ErrRunNotFound
	}
	if err := s.checkPublicRun(r.Context(), id); err != nil {
		return err
	}
	st, err := reader.RunState(r.Context(), id)
	if err != nil {
		return err
	}
	if s.reg.Internal(st.GraphName) {
		return engine.ErrRunNotFound
	}
	return s.writeHeld(w, r, http.StatusOK, runStateBodyOf(st), int64(len(st.State)))
}

// runStateBodyOf is the body of st.
func runStateBodyOf(st engine.RunState) runStateBody {
	state := st.State
	if len(state) == 0 {
		state = json.RawMessage("{}")
	}
	at := runPositionBody{Nodes: st.At.Nodes, WaitingFor: st.At.WaitingFor, WaitingForChild: st.At.WaitingForChild,
		WaitDeadline: apiTime(st.At.WaitDeadline), SleepingUntil: apiTime(st.At.SleepingUntil), RetryAt: apiTime(st.At.RetryAt)}
	if at.Nodes == nil {
		at.Nodes = []string{}
	}
	if at.WaitingFor == nil {
		at.WaitingFor = []string{}
	}
	if b := st.At.Branches; b != nil {
		at.Branches = &branchCountBody{Done: b.Done, Total: b.Total}
	}
	return runStateBody{InstanceID: st.InstanceID, GraphName: st.GraphName, RuntimeStatus: st.RuntimeStatus, State: state,
		Step: st.Step, Generation: st.Generation, At: at}
}

// runStateSchema is the schema of the answer of GET /api/runs/{instance_id}/state.
func runStateSchema() openapi.Member {
	dateTime := func(desc string) oasSchema {
		return oasSchema{"type": "string", "format": "date-time", "description": desc}
	}
	return openapi.Member{Key: "RunState", Value: oasObj([]string{"instance_id", "graph_name", "runtime_status", "state", "step", "generation", "at"}, openapi.Object{
		{Key: "instance_id", Value: oasStr()},
		{Key: "graph_name", Value: oasStr()},
		{Key: "runtime_status", Value: openapi.Ref("RuntimeStatus")},
		{Key: "state", Value: oasFreeObject("The state after the run's last committed step: the initial state before its first, the final state once it completed. A fan-out's branches enter it at their join.")},
		{Key: "step", Value: oasSchema{"type": "integer", "minimum": 0, "description": "The number of committed steps."}},
		{Key: "generation", Value: oasSchema{"type": "integer", "minimum": 0, "description": "How many times the run continued as new; 0 for a run that never did."}},
		{Key: "at", Value: oasObj([]string{"nodes", "waiting_for"}, openapi.Object{
			{Key: "nodes", Value: oasSchema{"type": "array", "items": oasStr(), "description": "The nodes about to run or running: the next node, or in a fan-out those of the branches that have not settled (the join node once all have); empty while the run waits and once it is finished."}},
			{Key: "waiting_for", Value: oasSchema{"type": "array", "items": oasStr(), "description": "The events the run waits for."}},
			{Key: "wait_deadline", Value: dateTime("When the wait for waiting_for times out; absent for a wait without a timeout.")},
			{Key: "waiting_for_child", Value: oasSchema{"type": "string", "description": "The child run the run waits for; absent otherwise."}},
			{Key: "sleeping_until", Value: dateTime("When the run's durable sleep ends; absent when it does not sleep.")},
			{Key: "branches", Value: oasObj([]string{"done", "total"}, openapi.Object{
				{Key: "done", Value: oasSchema{"type": "integer", "minimum": 0, "description": "The branches that settled."}},
				{Key: "total", Value: oasSchema{"type": "integer", "minimum": 1, "description": "The fan-out's width."}},
			})},
			{Key: "retry_at", Value: dateTime("When a failed step runs again: the node's next attempt, or in a fan-out the earliest branch back-off; absent when none waits to retry.")},
		})},
	})}
}
