package host

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// RunObserver receives lifecycle calls for native invoke and stream runs. A run that passes
// validation gets exactly one OnRunStarted followed by exactly one OnRunCompleted or
// OnRunFailed; a request refused before the graph ran gets only OnRunRejected.
//
// Calls are made synchronously on the request's goroutine, with the request's context (its
// values, e.g. a trace span a middleware put there, are visible; it may be cancelled by the
// terminal calls). Panics are recovered and logged; they never change the HTTP outcome or
// delay the lock release.
type RunObserver interface {
	// OnRunStarted is called when all pre-execution checks passed and the lock (if any) is
	// held, just before the graph runs.
	OnRunStarted(ctx context.Context, rc RunContext)
	// OnRunCompleted is called when the graph finished normally (stream: no error and no
	// overflow).
	OnRunCompleted(ctx context.Context, rc RunContext)
	// OnRunFailed is called when the graph failed or panicked, a stream event could not be
	// encoded, or the stream overflowed.
	OnRunFailed(ctx context.Context, rc RunContext, err error)
	// OnRunRejected is called when a pre-execution check failed.
	OnRunRejected(ctx context.Context, rc RunContext, reason RejectReason)
}

// RejectReason says why a run was rejected before the graph ran.
type RejectReason string

// Rejection reasons.
const (
	// ReasonInvalidRequest: body size, invalid JSON, request model (422), depth or node limits.
	ReasonInvalidRequest RejectReason = "invalid_request"
	// ReasonInvalidConfig: configurable or thread_id type, thread id rule, missing thread id
	// for a checkpointed graph.
	ReasonInvalidConfig RejectReason = "invalid_config"
	// ReasonUnsupportedVersion: a version for a graph that does not accept one.
	ReasonUnsupportedVersion RejectReason = "unsupported_version"
	// ReasonStreamingUnsupported: a stream request for a graph that cannot stream.
	ReasonStreamingUnsupported RejectReason = "streaming_unsupported"
	// ReasonLockContention: the thread is in use by another request (409).
	ReasonLockContention RejectReason = "lock_contention"
	// ReasonLockError: the lock backend failed (500). A product extension of the contract's
	// reasons: the run passed validation but never held the lock, so it was not started.
	ReasonLockError RejectReason = "lock_error"
	// ReasonStorageFull: the in-memory stores' byte budget has no room for the run's new work
	// (507, Options.MemoryBudget), or, under isolation, for the new thread's record. A
	// product extension of the contract's reasons, like ReasonLockError.
	ReasonStorageFull RejectReason = "storage_full"
	// ReasonTooManyRequests: the caller's answers still being sent (or the server's) fill
	// their bound of the response budget, or its event streams theirs (429,
	// Options.ResponseBudget). A product extension of the contract's reasons.
	ReasonTooManyRequests RejectReason = "too_many_requests"
)

// Endpoint names in a RunContext.
const (
	EndpointInvoke = "invoke"
	EndpointStream = "stream"
)

// transportBuffered is the only transport of this surface: stream output is collected and sent
// in one response. ("streaming" is reserved for true streaming.)
const transportBuffered = "buffered"

// RunContext describes one run to observers. It never carries input, output, config, headers
// or secrets. Observers receive copies; mutating one has no effect.
type RunContext struct {
	GraphName string
	// Endpoint is EndpointInvoke or EndpointStream.
	Endpoint string
	// RunID is a fresh 32-character lowercase hex id.
	RunID string
	// ThreadID is "" until the request was parsed, or when it carried none.
	ThreadID string
	// StartedAtNS and EndedAtNS are monotonic nanoseconds (since process start). EndedAtNS
	// is set on the terminal calls (completed, failed, rejected) and 0 before.
	StartedAtNS, EndedAtNS int64
	// AssistantID is the assistant id of platform runs; "" on native routes.
	AssistantID string
	// InvocationID is the Functions host's invocation id.
	InvocationID string
	// StreamMode is the stream mode of stream runs; "" for invoke.
	StreamMode string
	// Transport is "buffered": stream output is collected and sent in one response.
	Transport string
	// HasCheckpointer says whether the graph has a checkpointer.
	HasCheckpointer bool
	// LockBackend is the type name of the thread lock, e.g. "InProcessThreadLock".
	LockBackend string
	// TriggerType is "" for HTTP-triggered runs.
	TriggerType string
}

// Duration returns the run's duration, or 0 before a terminal call.
func (rc RunContext) Duration() time.Duration {
	if rc.EndedAtNS == 0 {
		return 0
	}
	return time.Duration(rc.EndedAtNS - rc.StartedAtNS)
}

var processStart = time.Now()

// monotonicNS returns nanoseconds on the monotonic clock since process start.
func monotonicNS() int64 { return int64(time.Since(processStart)) }

// NopObserver ignores every call. It is the default observer.
type NopObserver struct{}

// OnRunStarted does nothing.
func (NopObserver) OnRunStarted(context.Context, RunContext) {}

// OnRunCompleted does nothing.
func (NopObserver) OnRunCompleted(context.Context, RunContext) {}

// OnRunFailed does nothing.
func (NopObserver) OnRunFailed(context.Context, RunContext, error) {}

// OnRunRejected does nothing.
func (NopObserver) OnRunRejected(context.Context, RunContext, RejectReason) {}

// safeObserver contains an observer's panics.
type safeObserver struct {
	obs    RunObserver
	logger *slog.Logger
}

func (s safeObserver) call(hook string, rc *RunContext, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("run observer panicked", "hook", hook, "run_id", rc.RunID, "graph", rc.GraphName,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	fn()
}

func (s safeObserver) started(ctx context.Context, rc *RunContext) {
	s.call("started", rc, func() { s.obs.OnRunStarted(ctx, *rc) })
}

func (s safeObserver) completed(ctx context.Context, rc *RunContext) {
	rc.EndedAtNS = monotonicNS()
	s.call("completed", rc, func() { s.obs.OnRunCompleted(ctx, *rc) })
}

func (s safeObserver) failed(ctx context.Context, rc *RunContext, err error) {
	rc.EndedAtNS = monotonicNS()
	s.call("failed", rc, func() { s.obs.OnRunFailed(ctx, *rc, err) })
}

func (s safeObserver) rejected(ctx context.Context, rc *RunContext, reason RejectReason) {
	rc.EndedAtNS = monotonicNS()
	s.call("rejected", rc, func() { s.obs.OnRunRejected(ctx, *rc, reason) })
}
