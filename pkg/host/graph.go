package host

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// InvocableGraph is the one capability every hosted graph has: run to completion on one input.
//
// Invoke returns the graph's output. An output that encodes as a JSON object is returned to the
// caller unchanged (`{"output": <object>}`); anything else is wrapped as
// `{"output": {"result": "<text>"}}`. Key order follows encoding/json: struct field order,
// sorted keys for maps, the text itself for json.RawMessage. Any error (or panic) becomes
// 500 `Graph execution failed`; its text is logged, never sent.
//
// ctx is cancelled when the request ends or when a distributed thread lock held for the run is
// lost (context.Cause is then lock.ErrLockLost).
type InvocableGraph interface {
	Invoke(ctx context.Context, req Request) (any, error)
}

// StreamableGraph is the optional streaming capability.
//
// Stream runs the graph and calls emit once per event, in order. Each event becomes one SSE
// `data` frame. emit returns an error when the event cannot be accepted: ErrStreamOverflow when
// the buffered body would exceed the app's MaxStreamResponseBytes, or an encoding error (NaN,
// ±Inf, unsupported types). After emit fails, ctx is cancelled and every later emit fails too;
// the graph should stop and return the error. emit is safe for concurrent use but must not be
// called after Stream returns.
type StreamableGraph interface {
	Stream(ctx context.Context, req Request, emit func(chunk any) error) error
}

// GraphLike is a graph with both invoke and stream, the common case.
type GraphLike interface {
	InvocableGraph
	StreamableGraph
}

// StatefulGraph is the optional thread-state capability. Registering a StatefulGraph adds the
// route `GET graphs/<name>/threads/{thread_id}/state`.
//
// GetState returns the state of one thread. It returns an error wrapping ErrThreadNotFound when
// the thread or its state does not exist (404); any other error is a 500. A checkpointed graph
// that never saw the thread may instead return an empty StateView.
type StatefulGraph interface {
	GetState(ctx context.Context, threadID string) (StateView, error)
}

// Checkpointed is the optional interface of graphs that persist per-thread state. When
// HasCheckpointer reports true, invoke and stream require `config.configurable.thread_id` and
// run under the thread lock, and health details report `has_checkpointer: true`.
type Checkpointed interface {
	HasCheckpointer() bool
}

// VersionedGraph is the optional interface of graphs that accept the request's `version`
// field. A request with a version for a graph that does not report true is answered 422.
type VersionedGraph interface {
	AcceptsVersion() bool
}

// Request is what a graph receives for one run. Input and Config have passed the strict JSON,
// depth and node checks.
type Request struct {
	// Input is the request's `input` member: a JSON object. When the request had duplicate
	// keys, decoding it with encoding/json keeps the last one, as the contract requires.
	Input json.RawMessage
	// Config is the request's `config`.
	Config Config
	// Version is the request's `version`, or nil. Only a VersionedGraph ever sees a non-nil
	// Version.
	Version *string
	// StreamMode is the request's `stream_mode` ("values" unless given). Empty for invoke.
	// It is passed verbatim; a graph answers an unknown mode with an error.
	StreamMode string
}

// Config is the request's `config` object.
type Config struct {
	// ThreadID is `configurable.thread_id`, or "" when absent or null. It has passed the
	// thread id rule when non-empty.
	ThreadID string
	// Raw is the config object as sent, or nil when absent or null.
	Raw json.RawMessage
}

// StateView is a graph's view of one thread's state.
type StateView struct {
	// Values is the thread's state. It is answered as is when it encodes as a JSON object,
	// otherwise as {}.
	Values any
	// Next lists the nodes that run next; nil means none.
	Next []string
	// Metadata is the checkpoint's metadata; nil or empty is answered as null.
	Metadata map[string]any
	// Config and ParentConfig are the checkpoint's config and its parent's, if known. They
	// are not part of the native state response.
	Config, ParentConfig map[string]any
	// CreatedAt is when the checkpoint was written; zero when unknown.
	CreatedAt time.Time
}

// ErrThreadNotFound is returned (possibly wrapped) by StatefulGraph.GetState when the thread or
// its state does not exist.
var ErrThreadNotFound = errors.New("host: thread not found")

// ErrStreamOverflow is returned by a stream's emit function once the buffered response would
// exceed MaxStreamResponseBytes. The graph should stop and return it.
var ErrStreamOverflow = errors.New("host: stream response exceeded max buffered size")
