package runsapi

import (
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// What the read routes' answers hold while they are sent (Options.ResponseBudget). A client
// that reads slowly keeps its answer in memory until it has taken the last byte: the status,
// listing, history and feed answers are counted against the caller's identity (the master
// key's and every caller's with isolation off against the total only) from before they are
// encoded to the end of their write. An answer past a bound is refused before anything is sent
// (429 with Retry-After, or 413 for one answer past the bound of a response: ask for fewer
// items), and nothing is changed. The feed's event streams are counted too, per identity and in
// total (429 past a bound, before the stream opens); a stream whose next frames find no room
// sends an error frame and ends, and its client resumes with Last-Event-ID.

// runSummaryBytes is what one run of a listing is counted as before its answer is encoded.
const runSummaryBytes = 512

// historyBytes is what events hold: their data and names, plus a little per event.
func historyBytes(events []engine.HistoryEvent) int64 {
	var n int64
	for _, e := range events {
		n += int64(len(e.Data)+len(e.Name)+len(e.Node)+len(e.Type)) + 64
	}
	return n
}

// writeHeld answers v (json.dumps style) with status, counting estimate bytes (what the
// handler holds to encode it) and then the encoded body against the caller's share of the
// response budget until the write is done. Past a bound it returns the refusal and writes
// nothing.
func (s *Service) writeHeld(w http.ResponseWriter, r *http.Request, status int, v any, estimate int64) error {
	hold, err := s.responses.Hold(membudget.OwnerOf(r.Context()), estimate)
	if err != nil {
		return err
	}
	defer hold.Release()
	body, err := pyjson.Marshal(v)
	if err != nil {
		s.logger.ErrorContext(r.Context(), "encode durable response", "error", err)
		status, body = http.StatusInternalServerError, apierror.Runs.Internal()
	}
	if err := hold.Grow(int64(len(body))); err != nil {
		return err
	}
	apierror.WriteJSON(w, status, body)
	return nil
}
