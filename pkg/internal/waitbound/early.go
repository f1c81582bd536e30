package waitbound

import (
	"net/http"
	"strconv"
)

// EarlyReplier is a ResponseWriter that holds its whole response until its handler returns
// (the custom handler's capture of an invocation) and can instead send a complete response
// while the handler still runs.
type EarlyReplier interface {
	// CanReplyEarly reports whether ReplyEarly can send a response from this writer.
	CanReplyEarly() bool
	// ReplyEarly sends status, header and body as the complete response, at once, from any
	// goroutine, instead of anything written to the writer; the handler writes nothing after.
	ReplyEarly(status int, header http.Header, body []byte)
}

// CanReplyEarly reports whether ReplyEarly can complete w's response before its handler
// returns: w, or a writer it unwraps to (the Unwrap convention of http.ResponseController),
// is an EarlyReplier that can, or flushes to its connection (http.Flusher).
func CanReplyEarly(w http.ResponseWriter) bool {
	for w != nil {
		switch u := w.(type) {
		case EarlyReplier:
			return u.CanReplyEarly()
		case http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// ReplyEarly sends status, header and body as w's complete response while its handler goes
// on running: through the EarlyReplier w unwraps to, or else written with its length
// (Content-Length: the client has the whole response without the handler's return) and
// `Connection: close` (the connection stays with the handler until it returns, so the client
// must not send its next request on it), and flushed. Nothing may be written to w before or
// after. w must be a writer CanReplyEarly accepts.
func ReplyEarly(w http.ResponseWriter, status int, header http.Header, body []byte) {
	for u := w; u != nil; {
		if r, ok := u.(EarlyReplier); ok {
			r.ReplyEarly(status, header, body)
			return
		}
		uw, ok := u.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		u = uw.Unwrap()
	}
	h := w.Header()
	for k, v := range header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Connection", "close")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_ = http.NewResponseController(w).Flush()
}
