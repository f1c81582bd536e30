package sse

import (
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// ContentType is the Content-Type of a stream's response.
const ContentType = "text/event-stream; charset=utf-8"

// FailedFrame is the error frame of a run that failed after its stream began.
const FailedFrame = "event: error\ndata: {\"error\": \"stream processing failed\"}\n\n"

// ErrorFrame returns the frame `event: error\ndata: {"error": "<text>"}`.
func ErrorFrame(text string) string {
	b := append([]byte("event: error\ndata: {\"error\": "), pyjson.AppendString(nil, text)...)
	return string(append(b, "}\n\n"...))
}

// OverflowFrame is the error frame of a stream whose events passed its limit of maxBytes.
func OverflowFrame(maxBytes int) string {
	return ErrorFrame("stream response exceeded max buffered size (" + strconv.Itoa(maxBytes) + " bytes)")
}

// WaitExceededFrame is the error frame of a stream whose run passed the wait bound: the
// message of apierror.WaitExceeded, its first letter lower-cased.
func WaitExceededFrame(bound time.Duration) string {
	msg := apierror.WaitExceededMessage(bound)
	return ErrorFrame(strings.ToLower(msg[:1]) + msg[1:])
}
