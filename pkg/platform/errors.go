package platform

import (
	"log/slog"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
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
// public message are logged and answered with a generic text.
func writeError(w http.ResponseWriter, err error, logger *slog.Logger) {
	if _, public := apierror.Message(err); !public {
		logger.Error("platform request failed", "error", err)
	}
	apierror.Platform.Write(w, err)
}

// writeJSON answers v in the json.dumps style of the platform bodies.
func writeJSON(w http.ResponseWriter, status int, v any, logger *slog.Logger) {
	body, err := pyjson.Marshal(v)
	if err != nil {
		logger.Error("encode platform response", "error", err)
		status, body = http.StatusInternalServerError, apierror.Platform.Internal()
	}
	apierror.WriteJSON(w, status, body)
}

// repr quotes s like Python's repr of a str.
func repr(s string) string { return pyjson.Repr(s) }
