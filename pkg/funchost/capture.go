package funchost

import (
	"bytes"
	"net/http"
	"strings"
)

// responseCapture is the http.ResponseWriter handed to a handler in JSON invocation mode: it
// collects status, headers and body for the http output binding.
type responseCapture struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func newResponseCapture() *responseCapture {
	return &responseCapture{header: make(http.Header)}
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

// output turns the captured response into the http output value. Header values are sent as
// plain strings (the host writes an array as its JSON text), and the content type is sniffed
// like net/http does when the handler set none.
func (c *responseCapture) output() HTTPOutput {
	status := c.status
	if status == 0 {
		status = http.StatusOK
	}
	if c.body.Len() > 0 && c.header.Get("Content-Type") == "" {
		c.header.Set("Content-Type", http.DetectContentType(c.body.Bytes()))
	}
	headers := make(map[string]string, len(c.header))
	for k, v := range c.header {
		if len(v) > 0 {
			headers[k] = strings.Join(v, ", ")
		}
	}
	return HTTPOutput{StatusCode: status, Headers: headers, Body: c.body.String()}
}
