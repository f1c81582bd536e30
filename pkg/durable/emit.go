package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// Limits of Emit.
const (
	// MaxEmitsPerStep is how many events one step (a node visit with its route, or an event
	// handler) may emit; Emit refuses more with ErrTooManyEmits. The engine writes a step's
	// events with the step's own commit, one history row each, and one commit holds at most
	// 100 rows.
	MaxEmitsPerStep = 32
	// MaxEmitsPerBranch is how many events one branch of a fan-out (Parallel, Map) may emit:
	// a branch writes them at history slots the fan-out reserved for it.
	MaxEmitsPerBranch = 7
	// MaxEmitDataBytes is the largest JSON document an emitted event may carry; Emit refuses
	// a larger one with ErrEmitTooLarge. Documents above the engine's inline limit go to the
	// payload store, as large states do.
	MaxEmitDataBytes = 1 << 20
	// maxEmitNameUnits is the longest name, in UTF-16 code units (an event name's limit).
	maxEmitNameUnits = 256
)

// Errors of Emit.
var (
	// ErrTooManyEmits is returned by Emit past MaxEmitsPerStep events in one step (past
	// MaxEmitsPerBranch in a branch of a fan-out); the event
	// is not recorded, the ones before it are.
	ErrTooManyEmits = errors.New("durable: too many events emitted in one step")
	// ErrInvalidEmitName is returned by Emit for a name that is not 1 to 256 characters
	// (UTF-16 code units) of valid UTF-8 without control characters.
	ErrInvalidEmitName = errors.New("durable: invalid emitted event name: want 1 to 256 characters without control characters")
	// ErrEmitTooLarge is returned by Emit for data whose JSON is above MaxEmitDataBytes.
	ErrEmitTooLarge = errors.New("durable: emitted event data too large")
)

// Emit records an event named name carrying data (any JSON-encodable value, or a
// json.RawMessage holding JSON, kept compacted; nil is null) for the run the handler runs in.
// Under the engine the step's commit writes it to the run's history and feed as a row of type
// "custom" with data {"name": <name>, "data": <data>}, before the step's own rows: a client
// following the run's history sees it once the step is committed, never before, and exactly
// once however often the step ran. On an engine with a live channel the event is also sent
// there at once, as a chunk of kind "custom" that the commit makes final (see Write). A
// handler that returns an error emitted nothing: its attempt is not committed (the node and
// route of a visit that completed the node but failed its route keep theirs, written with
// the run's failure).
//
// Outside the engine (a handler called directly, an in-process run) there is nowhere to record
// it, and Emit does nothing. Errors: ErrInvalidEmitName, ErrTooManyEmits, ErrEmitTooLarge, or
// the encoding error of data; a refused event is not recorded.
func Emit(ctx context.Context, name string, data any) error {
	if !validEmitName(name) {
		return ErrInvalidEmitName
	}
	doc, err := emitJSON(data)
	if err != nil {
		return fmt.Errorf("emit %q: %w", name, err)
	}
	if len(doc) > MaxEmitDataBytes {
		return fmt.Errorf("emit %q: %w: %d bytes above %d", name, ErrEmitTooLarge, len(doc), MaxEmitDataBytes)
	}
	e := graphrun.EmitterFrom(ctx)
	if e == nil {
		return nil
	}
	limit := MaxEmitsPerStep
	if _, inBranch := BranchFrom(ctx); inBranch {
		limit = MaxEmitsPerBranch
	}
	if !e.Add(graphrun.EmittedEvent{Name: name, Data: doc}, limit) {
		return fmt.Errorf("emit %q: %w: at most %d", name, ErrTooManyEmits, limit)
	}
	if sink := e.Live(); sink != nil {
		// A preview on the live channel: the commit's custom row is the truth, so a preview
		// past the step's live bound is only left out.
		_ = sink.Chunk("custom", name, doc)
	}
	return nil
}

// emitJSON encodes data: JSON as it is, any other value with encoding/json.
func emitJSON(data any) (json.RawMessage, error) {
	switch v := data.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			return nil, fmt.Errorf("data is not valid JSON: %w", err)
		}
		return b.Bytes(), nil
	}
	doc, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("encode data: %w", err)
	}
	return doc, nil
}

// validEmitName reports whether name is 1 to 256 UTF-16 code units of valid UTF-8 without
// control characters (U+0000–U+001F, U+007F–U+009F): the rule of event names.
func validEmitName(name string) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	units := 0
	for _, r := range name {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return false
		}
		units++
		if r >= 0x10000 {
			units++
		}
	}
	return units <= maxEmitNameUnits
}
