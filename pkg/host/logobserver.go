package host

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
)

// Record messages of the logging observer.
const (
	logRunStarted   = "langgraph.run.started"
	logRunCompleted = "langgraph.run.completed"
	logRunFailed    = "langgraph.run.failed"
	logRunRejected  = "langgraph.run.rejected"
)

// LoggingObserver writes one slog record per lifecycle call: langgraph.run.started,
// .completed and .rejected at INFO, .failed at ERROR. Records carry the RunContext fields plus
// duration_ms and status, and error_type (the Go type name of the error, never its text) or
// reason.
type LoggingObserver struct {
	logger *slog.Logger
}

var _ RunObserver = (*LoggingObserver)(nil)

// NewLoggingObserver returns an observer logging to logger; nil means slog.Default().
func NewLoggingObserver(logger *slog.Logger) *LoggingObserver {
	if logger == nil {
		logger = slog.Default()
	}
	return &LoggingObserver{logger: logger}
}

// OnRunStarted logs langgraph.run.started.
func (o *LoggingObserver) OnRunStarted(ctx context.Context, rc RunContext) {
	o.log(ctx, slog.LevelInfo, logRunStarted, rc, "started")
}

// OnRunCompleted logs langgraph.run.completed.
func (o *LoggingObserver) OnRunCompleted(ctx context.Context, rc RunContext) {
	o.log(ctx, slog.LevelInfo, logRunCompleted, rc, "completed")
}

// OnRunFailed logs langgraph.run.failed with the error's type name.
func (o *LoggingObserver) OnRunFailed(ctx context.Context, rc RunContext, err error) {
	o.log(ctx, slog.LevelError, logRunFailed, rc, "failed", slog.String("error_type", errorType(err)))
}

// OnRunRejected logs langgraph.run.rejected with the reason.
func (o *LoggingObserver) OnRunRejected(ctx context.Context, rc RunContext, reason RejectReason) {
	o.log(ctx, slog.LevelInfo, logRunRejected, rc, "rejected", slog.String("reason", string(reason)))
}

func (o *LoggingObserver) log(ctx context.Context, level slog.Level, msg string, rc RunContext, status string, extra ...slog.Attr) {
	ctx = context.WithoutCancel(ctx)
	if !o.logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("graph_name", rc.GraphName),
		slog.String("endpoint", rc.Endpoint),
		slog.String("run_id", rc.RunID),
		nullableString("thread_id", rc.ThreadID),
		slog.Int64("started_at_ns", rc.StartedAtNS),
		slog.Int64("ended_at_ns", rc.EndedAtNS),
		nullableString("assistant_id", rc.AssistantID),
		nullableString("invocation_id", rc.InvocationID),
		nullableString("stream_mode", rc.StreamMode),
		slog.String("transport", rc.Transport),
		slog.Bool("has_checkpointer", rc.HasCheckpointer),
		slog.String("lock_backend", rc.LockBackend),
		nullableString("trigger_type", rc.TriggerType),
		slog.Float64("duration_ms", float64(rc.Duration().Microseconds())/1000),
		slog.String("status", status),
	}
	o.logger.LogAttrs(ctx, level, msg, append(attrs, extra...)...)
}

// nullableString logs "" as a null value.
func nullableString(key, v string) slog.Attr {
	if v == "" {
		return slog.Any(key, nil)
	}
	return slog.String(key, v)
}

// errorType returns the Go type name of err's root cause, e.g. "*host.InputError" for
// fmt.Errorf("run: %w", &InputError{...}): wrappers made by fmt.Errorf and errors.Join are
// looked through (the first error of a join), so the name says what went wrong, not
// "*fmt.wrapError".
func errorType(err error) string {
	if err == nil {
		return ""
	}
	for {
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			if !isPlainWrapper(err) || x.Unwrap() == nil {
				return fmt.Sprintf("%T", err)
			}
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			errs := x.Unwrap()
			if !isPlainWrapper(err) || len(errs) == 0 {
				return fmt.Sprintf("%T", err)
			}
			err = errs[0]
		default:
			return fmt.Sprintf("%T", err)
		}
	}
}

// isPlainWrapper reports the standard library's anonymous wrappers, which carry context text
// but no meaning of their own.
func isPlainWrapper(err error) bool {
	switch fmt.Sprintf("%T", err) {
	case "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		return true
	}
	return false
}

// typeName returns the bare type name of v, without package or pointer.
func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return t.String()
	}
	return t.Name()
}
