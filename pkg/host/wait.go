package host

import (
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// waitExceeded answers an invoke whose graph run passed Options.MaxWait: 504
// {"error":"error","detail":"Graph run did not finish within <n> s; it goes on in the background"}.
// The run goes on; the observer hears of its end when it ends.
func (a *GraphHostApp) waitExceeded(w http.ResponseWriter, g *hostedGraph, runID, invocationID string) {
	status, body := a.waitExceededReply(g, runID, invocationID)
	writeBody(w, status, "application/json", body)
}

// waitExceededReply logs that a run passed the wait bound and returns waitExceeded's answer.
func (a *GraphHostApp) waitExceededReply(g *hostedGraph, runID, invocationID string) (int, []byte) {
	a.logger.Warn("graph run passed the wait bound; answered without it", "graph", g.name,
		"run_id", runID, "invocation_id", invocationID, "max_wait", a.opts.MaxWait)
	return apierror.Hosting.Reply(apierror.WaitExceeded(a.opts.MaxWait))
}
