package runsapi

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// historyGeneration is the generation a history request reads (durable.ContinueAsNew): the
// run's current one when the request names none.
type historyGeneration struct {
	n   int64
	set bool
}

// parseGeneration reads the history route's optional "generation" query parameter: an
// integer of 0 or more.
func parseGeneration(q url.Values) (historyGeneration, error) {
	v := strings.TrimSpace(q.Get("generation"))
	if v == "" {
		return historyGeneration{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || !plainNumber(v) {
		return historyGeneration{}, &apiQueryError{"generation", "want an integer of 0 or more"}
	}
	return historyGeneration{n: n, set: true}, nil
}

// scope is what a continuation token of this generation's pages is bound to, besides the run:
// a token of one generation is refused for another.
func (g historyGeneration) scope() string {
	if !g.set {
		return ""
	}
	return "\x00g" + strconv.FormatInt(g.n, 10)
}

// historyPart reads one part of a history page: the current generation's (Runs.History), or
// the generation the request names when the runs can read one (engine.GenerationHistorian).
// Errors: Runs.History's; *engine.GenerationNotKeptError for a generation the run does not
// keep (a Runs that keeps only the current one keeps only generation 0 of a run that never
// continued, and is asked for another).
func (s *Service) historyPart(ctx context.Context, id string, g historyGeneration, token string, n int) (engine.HistoryList, error) {
	if !g.set {
		return s.runs.History(ctx, id, token, n)
	}
	if gh, ok := s.runs.(engine.GenerationHistorian); ok {
		return gh.GenerationHistory(ctx, id, g.n, token, n)
	}
	run, err := s.runs.GetRun(ctx, id)
	if err != nil {
		return engine.HistoryList{}, err
	}
	if g.n != run.Generation {
		return engine.HistoryList{}, &engine.GenerationNotKeptError{InstanceID: id, Generation: g.n, Current: run.Generation}
	}
	return s.runs.History(ctx, id, token, n)
}
