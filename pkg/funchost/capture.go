package funchost

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
)

// responseCapture is the http.ResponseWriter handed to a handler in JSON invocation mode: it
// collects status, headers and body for the http output binding.
type responseCapture struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer

	// reply is the host's request the capture's reply answers, when the handler may answer
	// early (waitbound.ReplyEarly); replied is set once it did (read by the request's
	// goroutine only after the handler returned).
	reply   http.ResponseWriter
	replied bool
}

func (c *responseCapture) Header() http.Header { return c.header }

func (c *responseCapture) WriteHeader(status int) {
	if c.wroteHeader || status < 100 || status > 999 {
		return
	}
	c.status, c.wroteHeader = status, true
}

func (c *responseCapture) Write(p []byte) (int, error) {
	if !c.wroteHeader {
		c.WriteHeader(http.StatusOK)
	}
	return c.body.Write(p)
}

// Flush is a no-op: the host receives the whole response at once in JSON mode.
func (c *responseCapture) Flush() {}

// CanReplyEarly reports whether the capture knows the host's request it answers.
func (c *responseCapture) CanReplyEarly() bool { return c.reply != nil }

// ReplyEarly answers the host's request at once with the reply of an http output of status,
// header and body, while the handler goes on: with its length, so the host has the whole
// reply, and `Connection: close`, so the host sends no other invocation on a connection the
// handler still holds. The request's goroutine then sends nothing more (replied).
func (c *responseCapture) ReplyEarly(status int, header http.Header, body []byte) {
	out := appendHTTPEnvelope(nil, status, header, body)
	h := c.reply.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	h.Set("Connection", "close")
	c.reply.WriteHeader(http.StatusOK)
	_, _ = c.reply.Write(out)
	_ = http.NewResponseController(c.reply).Flush()
	c.replied = true
}

// finish applies net/http's defaults: status 200, and a sniffed Content-Type when the handler
// wrote a body without one.
func (c *responseCapture) finish() {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.body.Len() > 0 && c.header.Get("Content-Type") == "" {
		c.header.Set("Content-Type", http.DetectContentType(c.body.Bytes()))
	}
}

// maxPooledBytes keeps unusually large buffers out of the pools.
const maxPooledBytes = 1 << 20

var capturePool = sync.Pool{New: func() any { return &responseCapture{} }}

func getCapture() *responseCapture {
	c := capturePool.Get().(*responseCapture)
	c.header = make(http.Header) // handlers may keep the map; never reuse it
	return c
}

func putCapture(c *responseCapture) {
	if c.body.Cap() > maxPooledBytes {
		return
	}
	c.header, c.status, c.wroteHeader = nil, 0, false
	c.reply, c.replied = nil, false
	c.body.Reset()
	capturePool.Put(c)
}
