package platform

import (
	"context"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// What the platform routes' answers hold while they are sent (Options.ResponseBudget,
// docs/limits.md#response-budget). A client that reads slowly keeps its answer in memory until
// it has taken the last byte, so every answer is counted against the caller's identity (the
// master key's, and every caller's with isolation off, against the total only) until its write
// is done:
//
//   - A read route (a thread, its state and history, a search, a run, a join) reserves
//     respbudget.LoadEstimate before it loads anything, and counts its encoded answer before
//     sending it: past a bound it answers 429 with Retry-After (413 for one answer past the
//     bound of a response), before anything is sent and with nothing changed. Those that load
//     at once (all but the joins) first wait for one of the caller's load slots
//     (respbudget.Budget.HoldLoad), so that a burst loads and encodes a few answers at a time
//     and the rest find the bound reached before they load anything.
//   - A route that changes something (creates, updates, runs) reserves the same before it
//     reads its body (429 past a bound, nothing changed); its answer is then counted whatever
//     the bounds, since its work is done: the requests that follow see it.
//   - A cancel and a delete are never refused; their answers are counted.
//   - A stream (runs/stream, and joining a run's stream) is an open event stream, bounded per
//     identity and in total (429 before it opens). Its frames are counted while they are
//     written; a joined stream whose next frames find no room sends an error frame and ends
//     without its end frame, and the client joins again with Last-Event-ID.
//   - A history page is encoded state by state, each counted as it is encoded, and written
//     state by state, each given back once written.

// answerMode is how a route's answer counts (counted).
type answerMode uint8

const (
	// readAnswer takes a load slot and reserves before the route runs
	// (respbudget.Budget.HoldLoad), and refuses an answer past a bound.
	readAnswer answerMode = iota
	// joinAnswer is readAnswer without a load slot, for a route that waits for a run before
	// it loads.
	joinAnswer
	// writeAnswer reserves before the route runs; its answer is counted, never refused.
	writeAnswer
	// freeAnswer is never refused (cancel, delete); its answer is counted.
	freeAnswer
)

type answerKey struct{}

// answer is the count of one request's answer.
type answer struct {
	hold respbudget.Hold
	mode answerMode
}

// counted wraps a route (inside isolate, so the caller's identity is known) with the count of
// its answer in mode.
func (s *Service) counted(h http.HandlerFunc, mode answerMode) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a := &answer{mode: mode}
		var reserve int64
		if mode != freeAnswer {
			reserve = respbudget.LoadEstimate
		}
		var err error
		if mode == readAnswer {
			err = s.responses.HoldLoad(r.Context(), &a.hold, membudget.OwnerOf(r.Context()), reserve)
		} else {
			err = s.responses.HoldIn(&a.hold, membudget.OwnerOf(r.Context()), reserve)
		}
		if err != nil {
			writeError(w, err, s.logger)
			return
		}
		defer a.hold.Release()
		h(w, r.WithContext(context.WithValue(r.Context(), answerKey{}, a)))
	}
}

// answerOf returns the count of the request's answer (nil outside counted).
func answerOf(ctx context.Context) *answer {
	a, _ := ctx.Value(answerKey{}).(*answer)
	return a
}

// count counts n bytes of the request's answer; a read route's past a bound are refused.
func (a *answer) count(n int64) error {
	if a == nil {
		return nil
	}
	if a.mode == readAnswer || a.mode == joinAnswer {
		return a.hold.Grow(n)
	}
	a.hold.Add(n)
	return nil
}

// writeJSON answers v in the json.dumps style of the platform bodies, counted in the
// request's answer until written; a read route's answer past a bound is refused instead.
func (s *Service) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := pyjson.Marshal(v)
	if err != nil {
		s.logger.Error("encode platform response", "error", err)
		status, body = http.StatusInternalServerError, apierror.Platform.Internal()
	}
	s.writeEncoded(w, r, status, body)
}

// writeEncoded answers an encoded JSON body as writeJSON does.
func (s *Service) writeEncoded(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	a := answerOf(r.Context())
	if err := a.count(int64(len(body))); err != nil {
		writeError(w, err, s.logger)
		return
	}
	a.loaded()
	apierror.WriteJSON(w, status, body)
}

// openStream counts an event stream of the caller's until the returned func is called, or
// refuses it (429) past the caller's or the total bound.
func (s *Service) openStream(r *http.Request) (func(), error) {
	return s.responses.OpenStream(membudget.OwnerOf(r.Context()))
}

// loaded frees the answer's load slot: it is counted, the next load may start.
func (a *answer) loaded() {
	if a != nil {
		a.hold.Loaded()
	}
}

// giveBack stops counting n bytes of the request's answer: a part already written, or one no
// longer held.
func (a *answer) giveBack(n int64) {
	if a != nil {
		a.hold.Shrink(n)
	}
}
