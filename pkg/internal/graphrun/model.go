package graphrun

import (
	"encoding/json"
	"errors"
)

// Model is what package durable lends this package: the parts of the graph model that
// JoinBranches, StateUpdate, RecoverHandler and Of need. durable installs it at init.
type Model struct {
	// Capabilities returns what carries g's optional capabilities when g is a graph of the
	// model (a durable.GraphRegistration), else nil.
	Capabilities func(g any) any
	// Join merges branch results into base with no reducers (durable's join).
	Join func(base json.RawMessage, results []BranchResult) (json.RawMessage, error)
	// StateUpdate returns the fields of after whose JSON differs from before's.
	StateUpdate func(before, after json.RawMessage) (json.RawMessage, error)
	// HandlerPanic returns the error a handler panic becomes (a *durable.HandlerError).
	HandlerPanic func(kind, name string, p any) error
}

// model is set once, by durable's init, before any caller of this package runs.
var model Model

// Install sets the model. Package durable calls it from its init; nothing else may.
func Install(m Model) { model = m }

var errNoModel = errors.New("graphrun: no graph model installed (package durable not linked)")

// JoinBranches merges branch results into base, a state object, in branch index order and
// with no reducers: a field updated by one branch takes its value, a field updated by several
// fails the join with a *durable.BranchConflictError. Other fields keep base's values; base's
// key order is kept, new fields follow. It is the join of a graph that is no Joiner.
func JoinBranches(base json.RawMessage, results []BranchResult) (json.RawMessage, error) {
	if model.Join == nil {
		return nil, errNoModel
	}
	return model.Join(base, results)
}

// StateUpdate returns the fields of the state object after whose JSON differs from before's,
// as an object in after's order: what a branch's node changed. Both must be JSON objects.
func StateUpdate(before, after json.RawMessage) (json.RawMessage, error) {
	if model.StateUpdate == nil {
		return nil, errNoModel
	}
	return model.StateUpdate(before, after)
}

// RecoverHandler turns a handler panic into a *durable.HandlerError so one bad handler cannot
// take the engine down. Callers of a graph's handlers defer it around each call:
//
//	defer graphrun.RecoverHandler("node", name, &err)
func RecoverHandler(kind, name string, err *error) {
	if p := recover(); p != nil {
		*err = model.HandlerPanic(kind, name, p)
	}
}
