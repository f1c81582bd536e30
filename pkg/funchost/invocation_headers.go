package funchost

import (
	"bytes"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// This file reads the trigger's Headers on the hot path straight into the rebuilt request's
// http.Header: canonical names, and all the values' text in one string and their slices in
// one array, instead of a map as sent, a []string and a string per header, and a second,
// canonical map.

// headerName is a header name the reader knows: as sent, and canonical.
type headerName struct{ name, canon string }

// commonHeaders holds the names of headers the Functions host forwards on most requests, so
// reading them allocates no key. Both spellings the host may send are kept, each as sent.
var commonHeaders = func() map[string]headerName {
	m := map[string]headerName{}
	for _, k := range []string{
		"Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Cache-Control",
		"Connection", "Content-Length", "Content-Type", "Cookie", "Host", "Max-Forwards",
		"Origin", "Referer", "Traceparent", "Tracestate", "Transfer-Encoding", "User-Agent",
		"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Original-URL",
		"X-Waws-Unencoded-URL", "X-Arr-Log-Id", "X-Arr-Ssl", "X-Site-Deployment-Id",
		"Client-Ip", "Disguised-Host", "X-Appservice-Proto", "X-Ms-Invocation-Id",
		"X-Functions-Key",
	} {
		canon := textproto.CanonicalMIMEHeaderKey(k)
		lk := strings.ToLower(k)
		m[k], m[lk] = headerName{k, canon}, headerName{lk, canon}
	}
	return m
}()

// hotScratch is the hot path's reusable scratch: the trigger, the body, when its text had
// escapes (see unquoteInto), and readCanonicalHeaders' working lists.
type hotScratch struct {
	trig    httpTrigger
	body    bytes.Buffer
	entries []headerEntry
	spans   [][2]int32
	text    []byte
}

// reset empties s for the next request; it reports false when s grew too large to keep.
func (s *hotScratch) reset() bool {
	if s.body.Cap() > maxPooledBytes || cap(s.text) > maxPooledBytes || cap(s.entries) > 4096 {
		return false
	}
	s.trig = httpTrigger{} // the request it rebuilt keeps its parts, not the trigger
	s.body.Reset()
	return true
}

// headerEntry is one member of Headers as read: its name and where its values are.
type headerEntry struct {
	headerName
	first, n int32 // its values are spans[first : first+n]
}

// readCanonicalHeaders reads Headers as request would turn them into an http.Header: names
// canonical, the values of names equal but for case merged, members without values left
// out; a repeated name keeps its last member's values, as encoding/json does. It returns
// nil when Headers is null.
func readCanonicalHeaders(d *jsontext.Decoder, scratch *hotScratch) (http.Header, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return nil, err
	}
	entries, spans, text := scratch.entries[:0], scratch.spans[:0], scratch.text[:0]
	defer func() { // kept for the next request, whatever they grew to
		clear(entries) // no name outlives the read
		scratch.entries, scratch.spans, scratch.text = entries[:0], spans[:0], text[:0]
	}()
	addValue := func(v []byte) {
		start := len(text)
		text = append(text, v...)
		spans = append(spans, [2]int32{int32(start), int32(len(text))})
	}
	err := readObject(d, func(key []byte) error {
		name, ok := commonHeaders[string(key)]
		if !ok {
			name.name = string(key)
			name.canon = textproto.CanonicalMIMEHeaderKey(name.name)
		}
		e := headerEntry{headerName: name, first: int32(len(spans))}
		err := readValues(d, addValue)
		e.n = int32(len(spans)) - e.first
		entries = append(entries, e)
		return err
	})
	if err != nil {
		return nil, err
	}
	all := string(text)
	vals := make([]string, len(spans))
	for i, s := range spans {
		vals[i] = all[s[0]:s[1]]
	}
	h := make(http.Header, len(entries))
	for _, e := range entries {
		if _, seen := h[e.canon]; seen {
			return mergeHeaders(entries, vals), nil // a repeated name, in any case: rare
		}
		if e.n > 0 {
			h[e.canon] = vals[e.first : e.first+e.n : e.first+e.n]
		}
	}
	return h, nil
}

// readValues reads a header's values, calling add with each one's text: a string, an array
// of strings, null (none), or any other value as its JSON text.
func readValues(d *jsontext.Decoder, add func([]byte)) error {
	switch d.PeekKind() {
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return err
		}
		for d.PeekKind() != ']' {
			v, err := d.ReadValue()
			if err != nil {
				return err
			}
			if v.Kind() != '"' {
				return errSyntax
			}
			b, _ := unquote(v)
			add(b)
		}
		_, err := d.ReadToken()
		return err
	case 'n':
		_, err := d.ReadToken()
		return err
	}
	v, err := d.ReadValue()
	if err != nil {
		return err
	}
	if v.Kind() == '"' {
		v, _ = unquote(v)
	}
	add(v)
	return nil
}

// mergeHeaders is readCanonicalHeaders' answer when two members' names are equal but for
// case, or equal: a member followed by one of the same name is dropped, and the values of
// the others with one canonical name are joined, in the order sent.
func mergeHeaders(entries []headerEntry, vals []string) http.Header {
	h := make(http.Header, len(entries))
	for i, e := range entries {
		if e.n == 0 || repeated(entries[i+1:], e.name) {
			continue
		}
		vs := vals[e.first : e.first+e.n : e.first+e.n]
		if prev, ok := h[e.canon]; ok {
			vs = append(prev[:len(prev):len(prev)], vs...)
		}
		h[e.canon] = vs
	}
	return h
}

// repeated reports whether a member of entries is named name exactly.
func repeated(entries []headerEntry, name string) bool {
	for _, e := range entries {
		if e.name == name {
			return true
		}
	}
	return false
}
