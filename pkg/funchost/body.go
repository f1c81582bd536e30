package funchost

import (
	"errors"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"io"
	"net"
	"net/http"
	"os"
)

// Kinds of request body failure, for errors.Is on a *BodyError. Each is a case of one kind of
// the HTTP surfaces' error vocabulary (413, 400, 408), which gives its status.
var (
	// ErrBodyTooLarge reports a body over the reader's cap (declared or streamed).
	ErrBodyTooLarge = apierror.NewKind(apierror.ErrTooLarge, "funchost: request body too large")
	// ErrMalformedBody reports a body whose framing is broken (e.g. a chunk size of "zz") or
	// that ended before its declared length.
	ErrMalformedBody = apierror.NewKind(apierror.ErrBadRequest, "funchost: malformed request body")
	// ErrBodyTimeout reports a body that did not arrive within the server's BodyReadTimeout
	// (or was cut by shutdown).
	ErrBodyTimeout = apierror.NewKind(apierror.ErrRequestTimeout, "funchost: request body timed out")
)

// BodyError is a request body that could not be read. Its Message is safe to show a caller;
// the underlying error stays in Err for logs.
type BodyError struct {
	// Kind is ErrBodyTooLarge, ErrMalformedBody or ErrBodyTimeout.
	Kind error
	// Limit is the cap in force (ErrBodyTooLarge).
	Limit int64
	// Size is the declared or counted size for ErrBodyTooLarge, or -1 when the body was
	// streamed and reading stopped at the cap.
	Size int64
	// Err is the read error, if any.
	Err error
}

// Error returns "read request body: " and the Message, with the read error if any.
func (e *BodyError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("read request body: %s: %v", e.Message(), e.Err)
	}
	return "read request body: " + e.Message()
}

// Unwrap returns the kind and the read error.
func (e *BodyError) Unwrap() []error { return []error{e.Kind, e.Err} }

// Status is the HTTP status for the caller: 413, 400 or 408.
func (e *BodyError) Status() int { return apierror.Status(e.Kind) }

// Message is the caller-facing text, e.g. "Request body too large: 2000 bytes (max 1024
// bytes)" or "Malformed request body: invalid chunked encoding".
func (e *BodyError) Message() string {
	switch e.Kind {
	case ErrBodyTooLarge:
		if e.Size >= 0 {
			return fmt.Sprintf("Request body too large: %d bytes (max %d bytes)", e.Size, e.Limit)
		}
		return fmt.Sprintf("Request body too large: more than %d bytes (max %d bytes)", e.Limit, e.Limit)
	case ErrBodyTimeout:
		return "Request body not received in time"
	}
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		return "Malformed request body: it ended before its declared length"
	}
	return "Malformed request body: invalid chunked encoding"
}

// ReadRequestBody reads r's whole body, at most limit bytes (limit <= 0 means no cap).
// Failures are a *BodyError: a Content-Length over the cap fails before anything is read, and
// a streamed (chunked) body fails as soon as it passes the cap, so nothing beyond limit+1 bytes
// is buffered. Bad chunked framing, a body cut short and a read timeout become
// ErrMalformedBody or ErrBodyTimeout instead of an opaque error. A net/http MaxBytesReader
// installed by an outer layer is reported as ErrBodyTooLarge with its own limit.
//
// The runs API and the hosting routes read bodies through this; map the error with
// (*BodyError).Status and Message, or answer it with WriteBodyError.
func ReadRequestBody(r *http.Request, limit int64) ([]byte, error) {
	return ReadRequestBodyInto(r, limit, nil)
}

// ReadRequestBodyInto is ReadRequestBody reading into buf's spare capacity (grown as needed)
// and returning buf[:n].
func ReadRequestBodyInto(r *http.Request, limit int64, buf []byte) ([]byte, error) {
	if limit > 0 && r.ContentLength > limit {
		return nil, &BodyError{Kind: ErrBodyTooLarge, Limit: limit, Size: r.ContentLength}
	}
	body := buf[:0]
	if r.Body == nil || r.Body == http.NoBody {
		return body, nil
	}
	if n := r.ContentLength; n > 0 && int64(cap(body)) < n+1 {
		body = make([]byte, 0, n+1)
	}
	max := limit
	if max <= 0 {
		max = int64(^uint64(0) >> 1)
	}
	for {
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
		room := body[len(body):cap(body)]
		if left := max + 1 - int64(len(body)); int64(len(room)) > left {
			room = room[:left]
		}
		n, err := r.Body.Read(room)
		body = body[:len(body)+n]
		if int64(len(body)) > max {
			return nil, &BodyError{Kind: ErrBodyTooLarge, Limit: limit, Size: -1}
		}
		if err == io.EOF {
			return body, nil
		}
		if err != nil {
			return nil, ClassifyBodyError(err)
		}
	}
}

// ClassifyBodyError turns an error from reading a request body into a *BodyError (or returns
// it unchanged if it already is one): a MaxBytesError is ErrBodyTooLarge, a timeout is
// ErrBodyTimeout, anything else (bad chunked framing, a body cut short) ErrMalformedBody.
func ClassifyBodyError(err error) error {
	var be *BodyError
	var mb *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &be):
		return be
	case errors.As(err, &mb):
		return &BodyError{Kind: ErrBodyTooLarge, Limit: mb.Limit, Size: -1, Err: err}
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &BodyError{Kind: ErrBodyTimeout, Err: err}
	default:
		return &BodyError{Kind: ErrMalformedBody, Err: err}
	}
}

// WriteBodyError answers a body failure as `{"error":"error","detail":"<Message>"}` with its
// Status. An error that is not a body failure answers 400 with a generic detail.
func WriteBodyError(w http.ResponseWriter, err error) {
	var be *BodyError
	if !errors.As(ClassifyBodyError(err), &be) {
		be = &BodyError{Kind: ErrMalformedBody}
	}
	apierror.Hosting.Write(w, apierror.New(be.Kind, be.Message()))
}
