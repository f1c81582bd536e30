package funchost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// This file is the hot path of every HTTP request under the Functions host: the invocation
// decoded, the caller's request rebuilt, served, and its response encoded into the reply.

// serveHTTPInvocation is the hot path: decode the trigger in one pass, serve the rebuilt
// request, and encode the captured response straight into the reply.
func (s *customHandler) serveHTTPInvocation(w http.ResponseWriter, r *http.Request, e *httpEntry, id string) {
	hb := hotPool.Get().(*hotBuffers)
	defer hb.put()
	_, err := readBodyVia(r, s.maxInv, &hb.payload.buf, &hb.limited)
	var trig *httpTrigger
	if err == nil {
		// The trigger's body and header values stay in the payload or the scratch buffer:
		// both outlive the handler's run.
		trig, err = hb.payload.decode(httpTriggerBinding, &hb.scratch)
	}
	if err == nil && trig == nil {
		err = fmt.Errorf("%w: Data has no %q", errBadInvocation, httpTriggerBinding)
	}
	var hr *http.Request
	if err == nil {
		hr, err = trig.request(r.Context(), id, s.prefix, e)
	}
	if err != nil {
		s.invocationFailed(w, e.fn.Name, id, err)
		return
	}
	capture := getCapture()
	defer putCapture(capture)
	capture.reply = w
	serveFunction(e, capture, hr, func() *slog.Logger { return s.functionLogger(hr.Context(), e.fn.Name) })
	if capture.replied {
		return // answered while the handler still ran (waitbound.ReplyEarly)
	}
	capture.finish()
	hb.payload.buf.Reset() // the request is served: the payload is free for the reply
	out := appendHTTPEnvelope(hb.payload.buf.AvailableBuffer(), capture.status, capture.header, capture.body.Bytes())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// hotBuffers are what serving one HTTP invocation reuses: the payload, read in place by its
// decoder and then holding the reply, the scratch an escaped body is unescaped into and the
// headers are read with, and the reader of the payload's limit.
type hotBuffers struct {
	payload invocationReader
	scratch hotScratch
	limited io.LimitedReader // reads the payload (readBodyVia)
}

var hotPool = sync.Pool{New: func() any { return new(hotBuffers) }}

// put returns hb to the pool, unless a buffer grew unusually large.
func (hb *hotBuffers) put() {
	if hb.payload.buf.Cap() > maxPooledBytes || !hb.scratch.reset() {
		return
	}
	hb.payload.buf.Reset()
	hb.payload.dec.Reset(&hb.payload.buf) // keeps no slice of the payload
	hotPool.Put(hb)
}

// request rebuilds the caller's HTTP request from the trigger, invocation id's: its context is
// ctx carrying the invocation (withInvocation).
func (t *httpTrigger) request(ctx context.Context, id, prefix string, e *httpEntry) (*http.Request, error) {
	if !validMethod(t.Method) {
		return nil, fmt.Errorf("%w: invalid method %q", errBadInvocation, t.Method)
	}
	tr := new(triggerRequest)
	tr.ctx = invocationContext{ctx, invocationInfo{id: id, identities: t.Identities, source: SourceHost}}
	u, err := parseTriggerURL(t.URL, &tr.url)
	if err != nil || t.URL == "" {
		u = &url.URL{Scheme: "http", Host: "localhost", Path: "/" + strings.Trim(prefix+"/"+e.template.text, "/")}
	}
	if u.RawQuery == "" && len(t.Query) > 0 {
		q := url.Values{}
		for k, v := range t.Query {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
	}
	header := t.header
	if header == nil {
		header = make(http.Header, len(t.Headers))
		for k, vs := range t.Headers {
			if len(vs) > 0 {
				ck := textproto.CanonicalMIMEHeaderKey(k)
				if prev, ok := header[ck]; ok {
					header[ck] = append(prev[:len(prev):len(prev)], vs...)
				} else {
					header[ck] = vs[:len(vs):len(vs)] // the trigger is this request's own
				}
			}
		}
	}
	var body io.ReadCloser = http.NoBody
	if t.Body != nil {
		tr.body.Reset(t.Body)
		body = &tr.body
	}
	hr := (&http.Request{
		Method:        t.Method,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          body,
		ContentLength: int64(len(t.Body)),
		Host:          u.Host,
		RequestURI:    u.RequestURI(),
	}).WithContext(&tr.ctx)
	params := t.Params
	if params == nil {
		if rest, ok := stripPrefix(u.EscapedPath(), prefix); ok {
			params, _ = e.template.Match(rest)
		}
	}
	for k, v := range params {
		if v != nil {
			hr.SetPathValue(k, *v)
		}
	}
	return hr, nil
}

// triggerRequest is what the rebuilt request needs besides itself, in one allocation: its
// URL, when plain (parseTriggerURL), its body, a reader of the trigger's bytes, and its
// context (withInvocation's).
type triggerRequest struct {
	url  url.URL
	body bodyReader
	ctx  invocationContext
}

// bodyReader is the rebuilt request's body: the trigger's bytes.
type bodyReader struct{ bytes.Reader }

// Close does nothing.
func (*bodyReader) Close() error { return nil }

// validMethod reports whether m is an HTTP token, as net/http requires of a method.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// appendHTTPEnvelope encodes the common reply, one http output and nothing else, without
// reflection: `{"Outputs":{"res":{"statusCode":N,"headers":{...},"body":"..."}},...}`.
// Header values are joined into plain strings (the host writes an array as its JSON text).
func appendHTTPEnvelope(dst []byte, status int, header http.Header, body []byte) []byte {
	dst = append(dst, `{"Outputs":{"res":{"statusCode":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, `,"headers":{`...)
	var keysBuf [16]string
	keys := keysBuf[:0]
	for k, v := range header {
		if len(v) > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		if vs := header[k]; len(vs) == 1 {
			dst = appendJSONString(dst, vs[0])
		} else {
			dst = appendJSONString(dst, strings.Join(vs, ", "))
		}
	}
	dst = append(dst, `},"body":`...)
	dst = appendJSONBytes(dst, body)
	return append(dst, `}},"Logs":[],"ReturnValue":null}`...)
}
