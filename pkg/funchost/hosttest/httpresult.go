package hosttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// httpResponse is an http output value as the host interprets it.
type httpResponse struct {
	status  int
	headers [][2]string
	body    []byte
	// typed is false when the body has no Content-Type (object bodies have no formatter).
	typed bool
}

// parseHTTPOutput reads an http output value: an object read case-insensitively as
// {statusCode | status, headers, body}. Anything else is the body of a 200.
func parseHTTPOutput(raw json.RawMessage) (*httpResponse, error) {
	resp := &httpResponse{status: http.StatusOK}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return resp, resp.setBody(raw)
	}
	var statusRaw, headersRaw, bodyRaw json.RawMessage
	for k, v := range obj {
		switch strings.ToLower(k) {
		case "statuscode":
			statusRaw = v
		case "status":
			if statusRaw == nil {
				statusRaw = v
			}
		case "headers":
			headersRaw = v
		case "body":
			bodyRaw = v
		}
	}
	if s := bytes.TrimSpace(statusRaw); len(s) > 0 && string(s) != "null" {
		text := string(s)
		if s[0] == '"' {
			_ = json.Unmarshal(s, &text)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil || n < 100 || n > 999 {
			return nil, fmt.Errorf("status %s is not an HTTP status code", s)
		}
		resp.status = int(n)
	}
	if h := bytes.TrimSpace(headersRaw); len(h) > 0 && string(h) != "null" {
		var hs map[string]json.RawMessage
		if err := json.Unmarshal(h, &hs); err != nil {
			return nil, fmt.Errorf("headers must be an object: %w", err)
		}
		for name, v := range hs {
			value, isNull := stringForm(v)
			if strings.EqualFold(name, "Content-Length") || strings.EqualFold(name, "Transfer-Encoding") {
				continue // framing is the server's business
			}
			if isNull {
				if strings.EqualFold(name, "Content-Type") {
					return nil, errors.New("content-type header is null")
				}
				continue
			}
			if strings.EqualFold(name, "Content-Type") {
				resp.typed = true
			}
			resp.headers = append(resp.headers, [2]string{name, value})
		}
	}
	if b := bytes.TrimSpace(bodyRaw); len(b) > 0 && string(b) != "null" {
		return resp, resp.setBody(b)
	}
	return resp, nil
}

// setBody writes a string as text and anything else as indented JSON (no formatter, so no
// Content-Type).
func (r *httpResponse) setBody(raw json.RawMessage) error {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("body: %w", err)
		}
		r.body = []byte(s)
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	r.body = buf.Bytes()
	return nil
}

// stringForm is a header value's string form: strings as they are, arrays and objects as
// their JSON text, other scalars as their text (booleans as .NET writes them).
func stringForm(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || string(v) == "null":
		return "", true
	case v[0] == '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return s, false
	case string(v) == "true":
		return "True", false
	case string(v) == "false":
		return "False", false
	case v[0] == '[' || v[0] == '{':
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			return buf.String(), false
		}
	}
	return string(v), false
}

// writeHTTPOutput turns an http output value into the caller's response.
func writeHTTPOutput(w http.ResponseWriter, raw json.RawMessage) error {
	resp, err := parseHTTPOutput(raw)
	if err != nil {
		return err
	}
	for _, h := range resp.headers {
		w.Header().Set(h[0], h[1])
	}
	if !resp.typed {
		w.Header()["Content-Type"] = nil // no sniffing: the host writes no Content-Type
	}
	if resp.status == http.StatusNoContent || resp.status == http.StatusNotModified {
		w.WriteHeader(resp.status)
		return nil
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(resp.body)))
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
	return nil
}

// writeEmptyObject is the host's answer when the http output is missing: 200 with body {}.
func writeEmptyObject(w http.ResponseWriter) {
	w.Header()["Content-Type"] = nil
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("{}"))
}
