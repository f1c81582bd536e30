package platform

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// RunStatus is the status of a background run.
type RunStatus string

// Run statuses, as the LangGraph SDK knows them.
const (
	RunPending     RunStatus = "pending"
	RunRunning     RunStatus = "running"
	RunSuccess     RunStatus = "success"
	RunError       RunStatus = "error"
	RunInterrupted RunStatus = "interrupted"
)

// Terminal reports whether a run in this status is finished.
func (s RunStatus) Terminal() bool { return s == RunSuccess || s == RunError || s == RunInterrupted }

// Run is a background run (runs.create on a thread).
type Run struct {
	RunID, ThreadID string
	// CreatedAt and UpdatedAt are UTC.
	CreatedAt, UpdatedAt time.Time
	Status               RunStatus
	// Request is what the run executes; Request.AssistantID names the graph.
	Request RunRequest
}

// Errors of the RunBackend contract.
var (
	// ErrRunNotFound reports an unknown (thread, run) pair.
	ErrRunNotFound = errors.New("platform: run not found")
	// ErrRunFinished reports a cancel of a run that already finished.
	ErrRunFinished = errors.New("platform: run already finished")
	// ErrRetryLater is returned by RunExecutor.ExecuteRun when the thread is busy with a
	// blocking run; the backend runs it again later, keeping the thread's order.
	ErrRetryLater = errors.New("platform: thread busy, retry the run later")
)

// RunExecutor executes background runs. The platform Service implements it and hands it to
// the backend (Options.NewRunBackend).
type RunExecutor interface {
	// ExecuteRun runs one background run to completion: it takes the thread's run lock,
	// runs the graph with ctx (cancel ctx to interrupt it), stores the output as the
	// thread's values and releases the thread. It returns the final status (success, error,
	// or interrupted when ctx was cancelled), or ErrRetryLater when the thread is busy.
	// A durable backend may call it more than once for one run (at-least-once); a run that
	// already succeeded is not re-checked.
	ExecuteRun(ctx context.Context, run Run) (RunStatus, error)
}

// RunBackend keeps and schedules background runs. It is the interface a durable-engine
// backend implements; LocalRuns is the in-process one. Implementations are safe for
// concurrent use.
type RunBackend interface {
	// Submit records run (status pending) and arranges for RunExecutor.ExecuteRun to run it
	// after the earlier runs of the same thread (FIFO per thread).
	Submit(ctx context.Context, run Run) error
	// Get returns a run. Returns ErrRunNotFound.
	Get(ctx context.Context, threadID, runID string) (Run, error)
	// List returns the thread's runs newest first, optionally only those with status,
	// after offset, at most limit.
	List(ctx context.Context, threadID string, status RunStatus, limit, offset int) ([]Run, error)
	// Join blocks until the run is terminal (or ctx ends) and returns it. Returns
	// ErrRunNotFound.
	Join(ctx context.Context, threadID, runID string) (Run, error)
	// Cancel interrupts a pending or running run; with wait it blocks until the run is
	// terminal. Returns ErrRunNotFound, ErrRunFinished.
	Cancel(ctx context.Context, threadID, runID string, wait bool) error
	// Active reports whether the thread has a pending or running run.
	Active(ctx context.Context, threadID string) (bool, error)
}

// runBody is the wire form of a Run.
type runBody struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	CreatedAt         string         `json:"created_at"`
	UpdatedAt         string         `json:"updated_at"`
	Status            string         `json:"status"`
	Metadata          map[string]any `json:"metadata"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	Kwargs            map[string]any `json:"kwargs"`
}

func wireRun(r Run) runBody {
	meta := r.Request.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	kw := map[string]any{"input": r.Request.Input, "stream_mode": r.Request.StreamMode}
	if r.Request.Config != nil {
		kw["config"] = r.Request.Config
	}
	if r.Request.Context != nil {
		kw["context"] = r.Request.Context
	}
	return runBody{
		RunID: r.RunID, ThreadID: r.ThreadID, AssistantID: r.Request.AssistantID,
		CreatedAt: timeText(r.CreatedAt), UpdatedAt: timeText(r.UpdatedAt), Status: string(r.Status),
		Metadata: meta, MultitaskStrategy: r.Request.MultitaskStrategy, Kwargs: kw,
	}
}

// rawOrEmpty returns v, or {} when nil.
func rawOrEmpty(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("{}")
	}
	return v
}
