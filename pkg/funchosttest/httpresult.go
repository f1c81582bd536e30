package funchosttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
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
	// text marks a string body, which goes through the string formatter.
	text bool
}

// parseHTTPOutput reads an http output value as the host does (GetHttpOutputBindingResponse,
// then HttpBinding): the value's text is deserialised into {StatusCode, Status, Body, Headers}
// with property names matched case-insensitively, so it must be an object (or a string holding
// one) and null fails. Only StatusCode is read (the always-present StatusCode property hides
// Status); a value that is not an integer (int.TryParse) means 200. Header values are written
// with their .NET string form.
func parseHTTPOutput(raw json.RawMessage) (*httpResponse, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("the http output is null")
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, fmt.Errorf("http output: %w", err)
		}
		raw = bytes.TrimSpace([]byte(text))
	}
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, errors.New("http output is not in the expected format (an object)")
	}
	resp := &httpResponse{status: http.StatusOK}
	var statusRaw, headersRaw, bodyRaw json.RawMessage
	for k, v := range obj {
		switch strings.ToLower(k) {
		case "statuscode":
			statusRaw = v
		case "headers":
			headersRaw = v
		case "body":
			bodyRaw = v
		}
	}
	status, err := parseStatus(statusRaw)
	if err != nil {
		return nil, err
	}
	resp.status = status
	if h := bytes.TrimSpace(headersRaw); len(h) > 0 && string(h) != "null" {
		var hs map[string]json.RawMessage
		if err := json.Unmarshal(h, &hs); err != nil {
			return nil, fmt.Errorf("headers must be an object: %w", err)
		}
		for name, v := range hs {
			value, isNull := stringForm(v)
			if isNull {
				// content-type: "cannot be null"; any other: its ToString() throws.
				return nil, fmt.Errorf("header %q is null", name)
			}
			if strings.ContainsAny(value, "\r\n") {
				return nil, fmt.Errorf("header %q: the value has a line break (an array or object)", name)
			}
			if strings.EqualFold(name, "Content-Length") || strings.EqualFold(name, "Transfer-Encoding") {
				continue // framing is the server's business
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

// parseStatus reads StatusCode, a string property: a JSON number or string that int.TryParse
// accepts is the status (100–999, else ASP.NET Core refuses it: 500); an object or array fails
// deserialisation (500); anything else is 200.
func parseStatus(raw json.RawMessage) (int, error) {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || string(s) == "null" {
		return http.StatusOK, nil
	}
	var text string
	switch s[0] {
	case '{', '[':
		return 0, fmt.Errorf("statusCode %s is not a string", s)
	case '"':
		_ = json.Unmarshal(s, &text)
	default:
		text = string(s)
		if f, err := strconv.ParseFloat(text, 64); err == nil && strings.ContainsAny(text, ".eE") && f == float64(int64(f)) {
			text = strconv.FormatInt(int64(f), 10) // Newtonsoft reads a float, then writes "201"
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 32)
	if err != nil {
		return http.StatusOK, nil
	}
	if n < 100 || n > 999 {
		return 0, fmt.Errorf("status %d is not an HTTP status code", n)
	}
	return int(n), nil
}

// setBody writes a string as text and anything else as indented JSON (no formatter, so no
// Content-Type).
func (r *httpResponse) setBody(raw json.RawMessage) error {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("body: %w", err)
		}
		r.body, r.text = []byte(s), true
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	r.body = buf.Bytes()
	return nil
}

// stringForm is a header value's .NET string form (JToken.ToString()): strings as they are,
// arrays and objects as their indented, multi-line JSON text (which no server accepts in a
// header), other scalars as their text (booleans as .NET writes them).
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
		if json.Indent(&buf, v, "", "  ") == nil {
			return strings.ReplaceAll(buf.String(), "\n", "\r\n"), false
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
	noBody := resp.status == http.StatusNoContent || resp.status == http.StatusNotModified
	switch {
	case resp.text && !noBody:
		// The string formatter: text/plain by default, and a charset is always declared.
		ct := w.Header().Get("Content-Type")
		if !resp.typed || ct == "" {
			ct = "text/plain"
		}
		if _, params, err := mime.ParseMediaType(ct); err != nil || params["charset"] == "" {
			ct += "; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
	case !resp.typed:
		w.Header()["Content-Type"] = nil // no sniffing: the host writes no Content-Type
	}
	if noBody {
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
