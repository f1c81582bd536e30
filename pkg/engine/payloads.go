package engine

import (
	"context"
	"fmt"
	"strconv"
)

// PayloadStore keeps values too large for a table property (state, event payloads, outputs)
// as blobs; the row keeps the key as a reference. Keys are "<run id>/<run nonce>/<name>",
// so the payloads of one run share a prefix that no other run (an earlier or later run of
// the same id included) extends.
//
// Implementations must be safe for concurrent use.
type PayloadStore interface {
	// Put stores data under key, replacing any previous value. Errors: ErrTooLarge above
	// MaxPayloadBytes; ErrInvalidEntity for an empty key.
	Put(ctx context.Context, key string, data []byte) error

	// Get returns the data stored under key. Errors: ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)

	// DeletePrefix deletes every payload whose key starts with prefix and returns how many it
	// deleted. A prefix that matches nothing is not an error. Errors: ErrInvalidEntity for an
	// empty prefix.
	DeletePrefix(ctx context.Context, prefix string) (int, error)
}

// MaxPayloadBytes is the largest payload the engine writes (64 MiB).
const MaxPayloadBytes = 64 << 20

// spillable names the properties whose values may move to the payload store.
var spillable = [...]string{pState, pOutput, pInput, pData, pPayload}

// spills remembers the payloads one write (with its rebases) stored, so that a rebase reuses
// them and the payloads no commit refers to are deleted: a rebased, dropped or failed
// commit leaves no orphan. Only a crash between a payload write and its commit can; it lies
// under the run's prefix and goes with the run's purge or replacement.
type spills struct {
	byValue map[string]string // value → key
}

// spill moves property values above InlineLimit to the payload store, leaving "" and a
// "<name>Ref" property with the key "<run id>/<run nonce>/<engine id>-<n>.json". Keys are
// unique per value written, so a losing writer never overwrites the winner's payload.
func (e *Engine) spill(ctx context.Context, runID, nonce string, ops []Op, sp *spills) error {
	for i := range ops {
		props := ops[i].Entity.Properties
		for _, name := range spillable {
			v, ok := props[name].(string)
			if !ok || len(v) <= e.opts.InlineLimit || UTF16Len(v) <= e.opts.InlineLimit {
				continue
			}
			key, done := sp.byValue[v]
			if !done {
				key = payloadPrefix(runID, nonce) + e.id + "-" + strconv.FormatInt(e.spillSeq.Add(1), 10) + ".json"
				if err := e.payloads.Put(ctx, key, []byte(v)); err != nil {
					return fmt.Errorf("spill %s of run %s: %w", name, runID, err)
				}
				if sp.byValue == nil {
					sp.byValue = map[string]string{}
				}
				sp.byValue[v] = key
			}
			props[name] = ""
			props[name+refSuffix] = key
		}
	}
	return nil
}

// release deletes the payloads sp stored that the committed ops (nil: none) do not refer
// to. Failures are logged: the payload is then an orphan under the run's prefix.
func (e *Engine) release(ctx context.Context, sp *spills, committed []Op) {
	if len(sp.byValue) == 0 {
		return
	}
	used := map[string]bool{}
	for _, op := range committed {
		for _, name := range spillable {
			if k, ok := op.Entity.Properties[name+refSuffix].(string); ok && k != "" {
				used[k] = true
			}
		}
	}
	for _, key := range sp.byValue {
		if used[key] {
			continue
		}
		// Keys end in ".json" and never extend one another, so the prefix is the key alone.
		if _, err := e.payloads.DeletePrefix(context.WithoutCancel(ctx), key); err != nil {
			e.log.Warn("delete unused payload", "key", key, "error", err.Error())
		}
	}
	sp.byValue = nil
}

// keep forgets the payloads sp stored without deleting them: a write whose outcome is
// unknown may refer to them.
func (sp *spills) keep() { sp.byValue = nil }

// payloadPrefix is the key prefix of every payload of one run (one generation and nonce).
func payloadPrefix(runID, nonce string) string { return runID + "/" + nonce + "/" }

// readSpilled returns an inline value, or the payload behind ref.
func (e *Engine) readSpilled(ctx context.Context, inline, ref string) (string, error) {
	if ref == "" {
		return inline, nil
	}
	data, err := e.payloads.Get(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("read payload %s: %w", ref, err)
	}
	return string(data), nil
}
