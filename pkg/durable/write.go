package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Limits of Write.
const (
	// MaxWriteDataBytes is the largest JSON document one chunk may carry; Write refuses a
	// larger one with ErrWriteTooLarge. A model's token or a progress line is a few bytes.
	MaxWriteDataBytes = 64 << 10
	// MaxWriteBytesPerStep bounds what one step attempt (a node visit with its route, an
	// event handler, a branch) writes to its run's live channel, its chunks' names and data
	// and their framing together; past it Write refuses with ErrStepStreamFull and the step
	// goes on.
	MaxWriteBytesPerStep = 1 << 20
)

// Errors of Write.
var (
	// ErrWriteTooLarge is returned by Write for data whose JSON is above MaxWriteDataBytes.
	ErrWriteTooLarge = errors.New("durable: written chunk too large")
	// ErrStepStreamFull is returned by Write once the step has written MaxWriteBytesPerStep
	// bytes (or its run's live channel holds all it may); the chunk is not written, the ones
	// before it are.
	ErrStepStreamFull = errors.New("durable: the step wrote the most its live channel takes")
)

// Write sends a chunk named name carrying data (any JSON-encodable value, or a
// json.RawMessage holding JSON) to whoever watches the run, while the step runs: the tokens
// of a model's reply, a progress line. Under the engine a chunk reaches the run's live channel
// at once, readable from any instance in order and by offset, so a reader that lost its
// connection resumes where it stopped. A chunk is not history: once the step commits, its
// history rows are the truth and its chunks are marked final; the chunks of an attempt that
// failed, or that the engine abandoned, are marked retracted, so a reader can drop what it
// showed. Durable events are Emit's.
//
// Outside the engine, or on an engine without a live channel, Write does nothing. Errors:
// ErrInvalidEmitName (the rule of event names), ErrWriteTooLarge, ErrStepStreamFull, or the
// encoding error of data.
func Write(ctx context.Context, name string, data any) error {
	if !validEmitName(name) {
		return ErrInvalidEmitName
	}
	doc, err := emitJSON(data)
	if err != nil {
		return fmt.Errorf("write %q: %w", name, err)
	}
	if len(doc) > MaxWriteDataBytes {
		return fmt.Errorf("write %q: %w: %d bytes above %d", name, ErrWriteTooLarge, len(doc), MaxWriteDataBytes)
	}
	sink := graphrun.EmitterFrom(ctx).Live()
	if sink == nil {
		return nil
	}
	if err := sink.Chunk("chunk", name, doc); err != nil {
		return fmt.Errorf("write %q: %w", name, ErrStepStreamFull)
	}
	return nil
}
