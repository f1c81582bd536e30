package runsapi

import (
	"context"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// What the read routes' answers hold while they are sent (Options.ResponseBudget). A client
// that reads slowly keeps its answer in memory until it has taken the last byte: the status,
// listing, history and feed answers are counted against the caller's identity (the master
// key's and every caller's with isolation off against the total only) from before they are
// encoded to the end of their write, a history page from before its rows are read (it loads in
// parts, each counted as it arrives: loadHistory). An answer past a bound is refused before
// anything is sent (429 with Retry-After, or 413 for one answer past the bound of a response:
// ask for fewer items), and nothing is changed; a history page whose later rows find no room
// ends before them, its continuation token leading there. The feed's event streams are counted
// too, per identity and in total (429 past a bound, before the stream opens); a stream whose
// next frames find no room sends an error frame and ends, and its client resumes with
// Last-Event-ID.

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
	return s.writeIn(w, r, hold, status, v)
}

// writeIn is writeHeld counting in hold, which the caller releases.
func (s *Service) writeIn(w http.ResponseWriter, r *http.Request, hold *respbudget.Hold, status int, v any) error {
	body := s.encode(r, &status, v)
	if err := hold.Grow(int64(len(body))); err != nil {
		return err
	}
	apierror.WriteJSON(w, status, body)
	return nil
}

// writeSettled is writeIn for a hold that counted what v holds: once v is encoded the hold
// counts the body alone (v is no longer held), growing only if the body is larger.
func (s *Service) writeSettled(w http.ResponseWriter, r *http.Request, hold *respbudget.Hold, status int, v any) error {
	body := s.encode(r, &status, v)
	if d := int64(len(body)) - hold.Held(); d > 0 {
		if err := hold.Grow(d); err != nil {
			return err
		}
	} else {
		hold.Shrink(-d)
	}
	apierror.WriteJSON(w, status, body)
	return nil
}

// encode encodes v (json.dumps style); a value that does not encode is a 500.
func (s *Service) encode(r *http.Request, status *int, v any) []byte {
	body, err := pyjson.Marshal(v)
	if err != nil {
		s.logger.ErrorContext(r.Context(), "encode durable response", "error", err)
		*status, body = http.StatusInternalServerError, apierror.Runs.Internal()
	}
	return body
}

// A history page is loaded in parts, each reserved in the answer's hold before it is read
// (its rows at the largest row seen so far, historyRowEstimate before any) and counted as it
// arrives, twice (the rows, and the body they are encoded into while both are held), so that a
// burst of requests holds about what the budget allows while their rows load, not only once
// they are encoded; once encoded the hold is settled to the body (writeSettled). A part the
// budget has no room for ends the page before it (its continuation token leads there); when
// the first part finds no room the request is refused, having loaded nothing.
const (
	// historyPartBytes is what one part's rows are reserved as, at most.
	historyPartBytes = 4 << 20
	// historyRowEstimate is what a row is reserved as before any is read: a larger value is
	// spilled to the payload store, which a first part meets at the cost of one more part.
	historyRowEstimate = 64 << 10
)

// loadHistory reads the page of limit rows of run id's history after token, counting its rows
// in hold while they load (see above).
func (s *Service) loadHistory(ctx context.Context, hold *respbudget.Hold, id string, gen historyGeneration, token string, limit int) (engine.HistoryList, error) {
	var out engine.HistoryList
	out.ContinuationToken = token
	perRow := int64(historyRowEstimate)
	for len(out.Events) < limit {
		n := int(min(int64(limit-len(out.Events)), max(1, historyPartBytes/perRow)))
		reserve := 2 * int64(n) * perRow
		if err := hold.Grow(reserve); err != nil {
			return out, partial(out, err)
		}
		part, err := s.historyPart(ctx, id, gen, out.ContinuationToken, n)
		if err != nil {
			hold.Shrink(reserve)
			return engine.HistoryList{}, err
		}
		if got := 2 * historyBytes(part.Events); got > reserve {
			if err := hold.Grow(got - reserve); err != nil {
				hold.Shrink(reserve) // the part is dropped: the page ends before it
				return out, partial(out, err)
			}
		} else {
			hold.Shrink(reserve - got)
		}
		out.Events = append(out.Events, part.Events...)
		out.ContinuationToken = part.ContinuationToken
		if out.ContinuationToken == "" {
			break
		}
		for _, e := range part.Events {
			perRow = max(perRow, historyBytes([]engine.HistoryEvent{e}))
		}
	}
	return out, nil
}

// partial is a part's refusal: nil when the page holds rows already (it ends before the part),
// err when it is the first.
func partial(page engine.HistoryList, err error) error {
	if len(page.Events) > 0 {
		return nil
	}
	return err
}
