package host

import (
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// What the hosting routes' answers hold while they are sent (Options.ResponseBudget,
// docs/limits.md#response-budget). A client that reads slowly keeps its answer in memory until
// it has taken the last byte, so every answer is counted against the caller's identity (the
// master key's, and every caller's with isolation off, against the total only) from before it
// is built to the end of its write:
//
//   - state waits for one of the caller's load slots (respbudget.Budget.HoldLoad: a few of its
//     answers of unknown size loaded and encoded at once) and reserves respbudget.LoadEstimate
//     before the graph's state is read, and counts the encoded body once it is known; past a
//     bound it answers 429 with Retry-After (413 for one answer past the bound of a response)
//     before anything is sent. A burst of requests thus loads a few states at a time, and the
//     rest find the bound reached before they load anything.
//   - invoke and stream reserve respbudget.LoadEstimate before the request's body is read, so
//     an identity whose answers fill its bound is refused 429 before its graph runs; a stream
//     is also an open event stream, bounded per identity and in total (429). The run's answer
//     is then counted whatever the bounds until it is written (its work is done, and it is
//     sent): the requests that follow see it.

// responses is the app's response budget (Options.ResponseBudget, or New's own).
func (a *GraphHostApp) responses() *respbudget.Budget { return a.opts.ResponseBudget }

// writeHeldBody answers body with status, counting it in hold until it is written; past a
// bound it returns the refusal and writes nothing.
func writeHeldBody(w http.ResponseWriter, hold *respbudget.Hold, status int, contentType string, body []byte) error {
	if err := hold.Grow(int64(len(body))); err != nil {
		return err
	}
	hold.Loaded() // counted: the next load may start
	writeBody(w, status, contentType, body)
	return nil
}

// budgetOwner is whose share of the response budget c's answers count against: its identity,
// "" (the total only) for the master key and with isolation off.
func budgetOwner(c isolation.Caller) string {
	if c.Admin {
		return ""
	}
	return c.ID
}
