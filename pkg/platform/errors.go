package platform

import (
	"log/slog"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Every HTTP failure of the platform routes is an *apierror.Error of one apierror kind whose
// message is the response's `detail`; apierror.Status maps it to the status.

// graphFailure is the public error for a graph's failed run: the graph's own 4xx with its
// message when it blames the client (host.ClientStatus), else "Graph execution failed" (a 500).
func graphFailure(err error) error {
	if status, msg, ok := host.ClientStatus(err); ok {
		return &apierror.Error{Status: status, Message: msg}
	}
	return apierror.GraphFailed
}

// writeError answers err in the platform shape, `{"detail": "<message>"}`. Errors without a
// public message are logged and answered with a generic text; a 429 of the response budget
// carries Retry-After.
func writeError(w http.ResponseWriter, err error, logger *slog.Logger) {
	if _, public := apierror.Message(err); !public {
		logger.Error("platform request failed", "error", err)
	}
	if apierror.Status(err) == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", respbudget.RetryAfter)
	}
	apierror.Platform.Write(w, err)
}

// repr quotes s like Python's repr of a str.
func repr(s string) string { return pyjson.Repr(s) }
