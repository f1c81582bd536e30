package host

import (
	"errors"
	"log/slog"
	"net/http"
)

// Request-level error kinds. Each HTTP failure of this surface wraps exactly one of them in a
// publicError whose message is the response's `detail`; httpStatus maps them to a status.
var (
	errBadRequest       = errors.New("host: bad request")              // 400, reason invalid_request
	errValidation       = errors.New("host: validation error")         // 422, reason invalid_request
	errInvalidConfig    = errors.New("host: invalid config")           // 400, reason invalid_config
	errUnsupportedVer   = errors.New("host: unsupported version")      // 422, reason unsupported_version
	errNoStreaming      = errors.New("host: streaming unsupported")    // 501, reason streaming_unsupported
	errLockContention   = errors.New("host: thread lock contention")   // 409, reason lock_contention
	errLockBackend      = errors.New("host: thread lock failed")       // 500, reason lock_error
	errGraphFailed      = errors.New("host: graph execution failed")   // 500
	errNotFound         = errors.New("host: not found")                // 404
	errInternal         = errors.New("host: internal error")           // 500
	errMissingPathParam = errors.New("host: missing path parameter")   // 400
	errNotSupported     = errors.New("host: capability not supported") // 409
	errRequestTimeout   = errors.New("host: request body timed out")   // 408
	errWaitExceeded     = errors.New("host: wait bound passed")        // 504
)

// httpStatus is the one place where an error of this surface becomes an HTTP status.
func httpStatus(err error) int {
	var pe *publicError
	if errors.As(err, &pe) && pe.status != 0 {
		return pe.status
	}
	switch {
	case errors.Is(err, errBadRequest), errors.Is(err, errInvalidConfig), errors.Is(err, errMissingPathParam),
		errors.Is(err, ErrInvalidThreadID), errors.Is(err, errTooDeep), errors.Is(err, errTooManyNode),
		errors.Is(err, errInvalidJSON):
		return http.StatusBadRequest
	case errors.Is(err, errValidation), errors.Is(err, errUnsupportedVer):
		return http.StatusUnprocessableEntity
	case errors.Is(err, errLockContention), errors.Is(err, errNotSupported):
		return http.StatusConflict
	case errors.Is(err, errNotFound):
		return http.StatusNotFound
	case errors.Is(err, errUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, errForbidden):
		return http.StatusForbidden
	case errors.Is(err, errNoStreaming):
		return http.StatusNotImplemented
	case errors.Is(err, errRequestTimeout):
		return http.StatusRequestTimeout
	case errors.Is(err, errWaitExceeded):
		return http.StatusGatewayTimeout
	default:
		return http.StatusInternalServerError
	}
}

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
	default:
		return ReasonInvalidRequest
	}
}

// publicDetail returns the message a caller may see: the contract message of a publicError,
// otherwise a generic text (error details stay in the log).
func publicDetail(err error) string {
	var pe *publicError
	if errors.As(err, &pe) {
		return pe.msg
	}
	return "Internal server error"
}

// writeError answers err as a native error body: `{"error":"error","detail":"<message>"}`.
func writeError(w http.ResponseWriter, err error, logger *slog.Logger) {
	status, body := errorReply(err, logger)
	writeBody(w, status, "application/json", body)
}

// errorReply is the status and JSON body writeError answers err with.
func errorReply(err error, logger *slog.Logger) (int, []byte) {
	return jsonReply(httpStatus(err), ErrorResponse{Error: "error", Detail: publicDetail(err)}, logger)
}

// writeJSON answers v in the compact style.
func writeJSON(w http.ResponseWriter, status int, v any, logger *slog.Logger) {
	status, body := jsonReply(status, v, logger)
	writeBody(w, status, "application/json", body)
}

// jsonReply is the status and compact JSON body writeJSON answers v with: a 500 when v does
// not encode.
func jsonReply(status int, v any, logger *slog.Logger) (int, []byte) {
	body, err := marshalCompact(v)
	if err != nil {
		logger.Error("encode response", "error", err)
		return http.StatusInternalServerError, []byte(`{"error":"error","detail":"Internal server error"}`)
	}
	return status, body
}

// writeBody answers raw bytes with an explicit content type (custom-handler JSON mode never
// sniffs one for us).
func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
