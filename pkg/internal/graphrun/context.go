package graphrun

import (
	"context"
	"encoding/json"
	"sync"
)

type stepInfoKey struct{}

// stepInfoCtx is a context carrying a step's info in one allocation (context.WithValue takes
// two, one for the boxed value). Its Value answers stepInfoKey with a *T.
type stepInfoCtx[T any] struct {
	context.Context
	info T
}

func (c *stepInfoCtx[T]) Value(key any) any {
	if _, ok := key.(stepInfoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// WithStepInfo returns a context carrying info, a durable.StepInfo: durable.StepInfoFrom
// reads it back.
func WithStepInfo[T any](ctx context.Context, info T) context.Context {
	return &stepInfoCtx[T]{Context: ctx, info: info}
}

// StepInfo returns what WithStepInfo stored in ctx, as a pointer to it (a *durable.StepInfo),
// or nil.
func StepInfo(ctx context.Context) any { return ctx.Value(stepInfoKey{}) }

type branchKey struct{}

// WithBranch returns a context carrying info, a durable.BranchInfo: the engine puts it in the
// context of a branch's node handler, and durable.BranchFrom reads it back.
func WithBranch[T any](ctx context.Context, info T) context.Context {
	return context.WithValue(ctx, branchKey{}, info)
}

// Branch returns what WithBranch stored in ctx (a durable.BranchInfo), or nil.
func Branch(ctx context.Context) any { return ctx.Value(branchKey{}) }

// EmittedEvent is one event a handler emitted with durable.Emit.
type EmittedEvent struct {
	// Name is the name the handler gave it.
	Name string
	// Data is its data as JSON.
	Data json.RawMessage
}

// Emitter collects the events the handlers of one step emit. The engine gives every attempt
// of a step a fresh one (WithEmitter) and stores what it collected with the step's commit,
// so a step that runs again does not store its events twice. It is safe for concurrent use
// (a handler may emit from goroutines it starts and waits for).
type Emitter struct {
	mu     sync.Mutex
	events []EmittedEvent // guarded by mu
	live   LiveSink       // guarded by mu; nil: no live channel (live.go)
}

type emitterKey struct{}

// WithEmitter returns a context whose handlers' durable.Emit calls are collected by the
// returned Emitter.
func WithEmitter(ctx context.Context) (context.Context, *Emitter) {
	e := &Emitter{}
	return context.WithValue(ctx, emitterKey{}, e), e
}

// EmitterFrom returns the Emitter of ctx, or nil outside WithEmitter.
func EmitterFrom(ctx context.Context) *Emitter {
	e, _ := ctx.Value(emitterKey{}).(*Emitter)
	return e
}

// Add records ev unless limit events are recorded already; it reports whether it did.
func (e *Emitter) Add(ev EmittedEvent, limit int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.events) >= limit {
		return false
	}
	e.events = append(e.events, ev)
	return true
}

// Events returns the events emitted so far, in the order they were added.
func (e *Emitter) Events() []EmittedEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.events) == 0 {
		return nil
	}
	out := make([]EmittedEvent, len(e.events))
	copy(out, e.events)
	return out
}
