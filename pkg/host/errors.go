package host

import (
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
)

// Request-level error kinds of the hosting routes, each a case of one apierror kind (which
// apierror.Status maps to the status) that rejectReason tells apart. Each HTTP failure of
// this surface is an *apierror.Error of one of them, or of an apierror kind, whose message is
// the response's `detail`.
var (
	errInvalidConfig  = apierror.NewKind(apierror.ErrBadRequest, "host: invalid config")            // reason invalid_config
	errUnsupportedVer = apierror.NewKind(apierror.ErrValidation, "host: unsupported version")       // reason unsupported_version
	errNoStreaming    = apierror.NewKind(apierror.ErrNotImplemented, "host: streaming unsupported") // reason streaming_unsupported
	errLockContention = apierror.NewKind(apierror.ErrConflict, "host: thread lock contention")      // reason lock_contention
	errNotSupported   = apierror.NewKind(apierror.ErrConflict, "host: capability not supported")    // reason lock_contention
	errLockBackend    = apierror.NewKind(apierror.ErrInternal, "host: thread lock failed")          // reason lock_error
)

// rejectReason is the observer's reason for a request refused before the graph ran.
func rejectReason(err error) RejectReason {
	switch {
	case errors.Is(err, errInvalidConfig), errors.Is(err, ErrInvalidThreadID):
		return ReasonInvalidConfig
	case errors.Is(err, errUnsupportedVer):
		return ReasonUnsupportedVersion
	case errors.Is(err, errNoStreaming):
		return ReasonStreamingUnsupported
	case errors.Is(err, errLockContention), errors.Is(err, errNotSupported):
		return ReasonLockContention
	case errors.Is(err, errLockBackend):
		return ReasonLockError
	case errors.Is(err, apierror.ErrStorageFull):
		return ReasonStorageFull
	case errors.Is(err, apierror.ErrTooManyRequests):
		return ReasonTooManyRequests
	default:
		return ReasonInvalidRequest
	}
}

// writeError answers err in the hosting shape: `{"error":"error","detail":"<message>"}`; a 429
// of the response budget carries Retry-After.
func writeError(w http.ResponseWriter, err error) {
	if apierror.Status(err) == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", respbudget.RetryAfter)
	}
	apierror.Hosting.Write(w, err)
}

// writeBody answers raw bytes with an explicit content type (custom-handler JSON mode never
// sniffs one for us).
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
