package platform

import (
	"bytes"
	"context"
	"errors"
	"strconv"
)

// A background run's stream is kept so that a client can join it later (GET
// threads/{thread_id}/runs/{run_id}/stream, the SDK's runs.joinStream): the run's execution
// writes its frames, each event with an id (1, 2, ...), and stores them in chunks through the
// backend's RunStreams; a client reads them from the start or after the Last-Event-ID it saw,
// then live ones until the run ends (joinstream.go).

// RunStreams is the optional capability of a RunBackend that keeps its runs' streams. LocalRuns
// keeps them in memory; pkg/platformruns in the durable engine's payload store, so that every
// instance reads them. Without it, joining a run's stream answers 501.
type RunStreams interface {
	// RunStream returns the chunks of a run's stream. ctx is ExecuteRun's when the executing
	// run writes them, a request's when a client reads them.
	RunStream(ctx context.Context, threadID, runID string) (StreamChunks, error)
}

// StreamChunks stores the chunks of one run's stream, numbered from 0. A chunk is a sequence of
// whole frames; once a chunk is stored it is never changed (a write repeats the same bytes).
type StreamChunks interface {
	// PutChunk stores chunk n. Errors: the store's; the caller writes the same bytes again
	// later when the outcome is unknown.
	PutChunk(ctx context.Context, n int, data []byte) error
	// Chunk returns chunk n. Errors: ErrChunkNotFound when it is not stored (yet).
	Chunk(ctx context.Context, n int) ([]byte, error)
}

// ErrChunkNotFound reports a stream chunk that is not stored, or not yet.
var ErrChunkNotFound = errors.New("platform: stream chunk not found")

// ErrStreamStoreFull reports a stream chunk refused because the store holds all it may.
var ErrStreamStoreFull = errors.New("platform: stream store is full")

// frame is one frame of a kept stream: id 0 for the terminal frames (error, end), which
// carry no id line.
type frame struct {
	id    int64
	event string
	text  []byte // the whole frame, ending in "\n\n"
}

// appendFrame appends the frame `id: <id>\nevent: <event>\ndata: <data>\n\n` (without the id
// line when id is 0).
func appendFrame(dst []byte, id int64, event string, data []byte) []byte {
	if id > 0 {
		dst = strconv.AppendInt(append(dst, "id: "...), id, 10)
		dst = append(dst, '\n')
	}
	dst = append(append(append(dst, "event: "...), event...), "\ndata: "...)
	return append(append(dst, data...), "\n\n"...)
}

// errBadChunk reports a stored chunk that is not a sequence of frames.
var errBadChunk = errors.New("platform: stream chunk is not a sequence of frames")

// parseFrames splits a stored chunk into its frames. Frames end in "\n\n" and hold no blank
// line (their data is one line of JSON).
func parseFrames(chunk []byte) ([]frame, error) {
	var out []frame
	for len(chunk) > 0 {
		end := bytes.Index(chunk, []byte("\n\n"))
		if end < 0 {
			return nil, errBadChunk
		}
		f := frame{text: chunk[:end+2]}
		rest := chunk[:end]
		if v, ok := bytes.CutPrefix(rest, []byte("id: ")); ok {
			line, after, _ := bytes.Cut(v, []byte("\n"))
			id, err := strconv.ParseInt(string(line), 10, 64)
			if err != nil || id < 1 {
				return nil, errBadChunk
			}
			f.id, rest = id, after
		}
		v, ok := bytes.CutPrefix(rest, []byte("event: "))
		if !ok {
			return nil, errBadChunk
		}
		name, _, _ := bytes.Cut(v, []byte("\n"))
		f.event = string(name)
		out = append(out, f)
		chunk = chunk[end+2:]
	}
	return out, nil
}
