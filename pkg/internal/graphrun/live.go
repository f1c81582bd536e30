package graphrun

import "encoding/json"

// LiveSink receives what the handlers of one step attempt write to their run's live channel
// while they run (durable.Write, and a preview of every durable.Emit). The engine gives each
// attempt its own (Emitter.SetLive); outside the engine there is none.
type LiveSink interface {
	// Chunk writes one chunk of kind ("chunk" for durable.Write, "custom" for durable.Emit)
	// named name carrying data (JSON). It returns an error past the step's bound, and writes
	// nothing then.
	Chunk(kind, name string, data json.RawMessage) error
}

// SetLive makes s the live sink of the handlers that use e.
func (e *Emitter) SetLive(s LiveSink) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.live = s
}

// Live returns the live sink of e (nil: none, or e nil).
func (e *Emitter) Live() LiveSink {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.live
}
