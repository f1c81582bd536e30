package funchost

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file holds a small JSON reader specialised to the HTTP invocation payload. The payload
// path is the hot path of every HTTP request under the Functions host, and encoding/json's
// reflection and repeated validation of nested RawMessages cost more than the handler itself.
// The reader is strict (it accepts exactly RFC 8259 JSON), matches keys case-insensitively and
// lets the last duplicate win, like encoding/json; FuzzDecodeHTTPInvocation checks it against
// encoding/json.

var errSyntax = errors.New("invalid JSON")

type jsonReader struct {
	data []byte
	pos  int
}

func (r *jsonReader) ws() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *jsonReader) peek() byte {
	r.ws()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

func (r *jsonReader) expect(c byte) error {
	if r.peek() != c {
		return errSyntax
	}
	r.pos++
	return nil
}

// object calls fn for each member with the reader positioned at the value; fn must consume it.
func (r *jsonReader) object(fn func(key []byte) error) error {
	if err := r.expect('{'); err != nil {
		return err
	}
	if r.peek() == '}' {
		r.pos++
		return nil
	}
	for {
		if r.peek() != '"' {
			return errSyntax
		}
		key, err := r.stringBytes()
		if err != nil {
			return err
		}
		if err := r.expect(':'); err != nil {
			return err
		}
		r.ws()
		if err := fn(key); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

// stringBytes reads a JSON string and returns its decoded bytes. The result may alias the input
// when the string has no escapes.
func (r *jsonReader) stringBytes() ([]byte, error) {
	if r.peek() != '"' {
		return nil, errSyntax
	}
	r.pos++
	start := r.pos
	r.pos = scanPlain(r.data, r.pos)
	if r.pos >= len(r.data) {
		return nil, errSyntax
	}
	switch r.data[r.pos] {
	case '"':
		s := r.data[start:r.pos]
		r.pos++
		if !utf8.Valid(s) {
			return replaceInvalidUTF8(s), nil
		}
		return s, nil
	case '\\':
		return r.escapedString(start)
	}
	return nil, errSyntax // a control character
}

// plainByte marks the bytes a JSON string may hold unescaped.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanPlain returns the index of the first byte at or after i that is not plain string
// content (a quote, a backslash or a control character), or len(data).
func scanPlain(data []byte, i int) int {
	for i < len(data) && plainByte[data[i]] {
		i++
	}
	return i
}

func (r *jsonReader) escapedString(start int) ([]byte, error) {
	out := make([]byte, 0, r.pos-start+64)
	out = append(out, r.data[start:r.pos]...)
	for r.pos < len(r.data) {
		if end := scanPlain(r.data, r.pos); end > r.pos {
			out = append(out, r.data[r.pos:end]...)
			r.pos = end
			continue
		}
		c := r.data[r.pos]
		switch {
		case c == '"':
			r.pos++
			if !utf8.Valid(out) {
				out = replaceInvalidUTF8(out)
			}
			return out, nil
		case c < 0x20:
			return nil, errSyntax
		}
		if r.pos+1 >= len(r.data) {
			return nil, errSyntax
		}
		esc := r.data[r.pos+1]
		r.pos += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			u, ok := r.hex4()
			if !ok {
				return nil, errSyntax
			}
			ru := rune(u)
			if utf16.IsSurrogate(ru) {
				ru = utf8.RuneError
				if r.pos+1 < len(r.data) && r.data[r.pos] == '\\' && r.data[r.pos+1] == 'u' {
					save := r.pos
					r.pos += 2
					lo, ok := r.hex4()
					if !ok {
						return nil, errSyntax
					}
					if dec := utf16.DecodeRune(rune(u), rune(lo)); dec != utf8.RuneError {
						ru = dec
					} else {
						r.pos = save
					}
				}
			}
			out = utf8.AppendRune(out, ru)
		default:
			return nil, errSyntax
		}
	}
	return nil, errSyntax
}

func (r *jsonReader) hex4() (uint16, bool) {
	if r.pos+4 > len(r.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(r.data[r.pos:r.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	r.pos += 4
	return uint16(v), true
}

// raw skips one value, validating it, and returns its text.
func (r *jsonReader) raw() (json.RawMessage, error) {
	r.ws()
	start := r.pos
	if err := r.skip(0); err != nil {
		return nil, err
	}
	return r.data[start:r.pos], nil
}

const maxJSONDepth = 10000

func (r *jsonReader) skip(depth int) error {
	if depth > maxJSONDepth {
		return errSyntax
	}
	switch c := r.peek(); {
	case c == '{':
		return r.object(func([]byte) error { return r.skip(depth + 1) })
	case c == '[':
		return r.array(func() error { return r.skip(depth + 1) })
	case c == '"':
		_, err := r.stringBytes()
		return err
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	}
	return errSyntax
}

func (r *jsonReader) array(fn func() error) error {
	if err := r.expect('['); err != nil {
		return err
	}
	if r.peek() == ']' {
		r.pos++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return nil
		default:
			return errSyntax
		}
	}
}

func (r *jsonReader) literal(word string) error {
	if !bytes.HasPrefix(r.data[r.pos:], []byte(word)) {
		return errSyntax
	}
	r.pos += len(word)
	return nil
}

func (r *jsonReader) number() error {
	if r.data[r.pos] == '-' {
		r.pos++
	}
	digits := func() int {
		n := 0
		for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
			r.pos++
			n++
		}
		return n
	}
	intStart := r.pos
	if n := digits(); n == 0 || (n > 1 && r.data[intStart] == '0') {
		return errSyntax
	}
	if r.pos < len(r.data) && r.data[r.pos] == '.' {
		r.pos++
		if digits() == 0 {
			return errSyntax
		}
	}
	if r.pos < len(r.data) && (r.data[r.pos] == 'e' || r.data[r.pos] == 'E') {
		r.pos++
		if r.pos < len(r.data) && (r.data[r.pos] == '+' || r.data[r.pos] == '-') {
			r.pos++
		}
		if digits() == 0 {
			return errSyntax
		}
	}
	return nil
}

// decodeHTTPInvocation reads `{"Data": {"<binding>": <httpTrigger>}, ...}` in one pass,
// skipping (but validating) everything else, and returns the decoded trigger (nil when the
// binding is missing or null).
func decodeHTTPInvocation(data []byte, binding string) (*HTTPTrigger, error) {
	r := &jsonReader{data: data}
	var trig *HTTPTrigger
	err := r.object(func(key []byte) error {
		if !bytes.EqualFold(key, []byte("Data")) {
			return r.skip(0)
		}
		if r.peek() == 'n' {
			trig = nil // like encoding/json: a later null Data clears the bindings
			return r.literal("null")
		}
		return r.object(func(key []byte) error {
			if !bytes.EqualFold(key, []byte(binding)) {
				return r.skip(0)
			}
			if r.peek() == 'n' {
				trig = nil
				return r.literal("null")
			}
			t, err := r.httpTrigger()
			trig = t
			return err
		})
	})
	if r.ws(); err == nil && r.pos != len(r.data) {
		err = errSyntax // trailing data
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInvocation, err)
	}
	if trig == nil {
		return nil, nil
	}
	if trig.Method == "" {
		return nil, fmt.Errorf("%w: http trigger has no Method", ErrBadInvocation)
	}
	return trig, nil
}

func (r *jsonReader) optString() (string, error) {
	if r.peek() == 'n' {
		return "", r.literal("null")
	}
	b, err := r.stringBytes()
	return string(b), err
}

func (r *jsonReader) httpTrigger() (*HTTPTrigger, error) {
	t := &HTTPTrigger{}
	var body json.RawMessage
	var bodyText []byte
	bodyFresh := false
	err := r.object(func(key []byte) error {
		var err error
		switch {
		case bytes.EqualFold(key, []byte("Url")):
			t.URL, err = r.optString()
		case bytes.EqualFold(key, []byte("Method")):
			t.Method, err = r.optString()
		case bytes.EqualFold(key, []byte("Query")):
			t.Query, err = r.query()
		case bytes.EqualFold(key, []byte("Identities")):
			t.Identities, err = r.raw()
			if string(t.Identities) == "null" {
				t.Identities = nil
			}
			t.Identities = bytes.Clone(t.Identities) // the input buffer is reused
		case bytes.EqualFold(key, []byte("Body")):
			body, bodyText = nil, nil
			if r.peek() == '"' {
				start := r.pos
				bodyText, err = r.stringBytes()
				bodyFresh = err == nil && !aliases(r.data[start:r.pos], bodyText)
				if err == nil && bodyText == nil {
					bodyText = []byte{}
				}
			} else {
				body, err = r.raw()
			}
		case bytes.EqualFold(key, []byte("Params")):
			t.Params, err = r.params()
		case bytes.EqualFold(key, []byte("Headers")):
			t.Headers, err = r.headers()
		default:
			err = r.skip(0)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	t.Method = strings.ToUpper(t.Method)
	if bodyText != nil {
		if isBinaryMediaType(headerValue(t.Headers, "Content-Type")) {
			b, err := base64.StdEncoding.AppendDecode(nil, bodyText)
			if err != nil {
				return nil, errors.New("body is not base64")
			}
			t.Body = b
		} else if bodyFresh {
			t.Body = bodyText
		} else {
			t.Body = bytes.Clone(bodyText) // aliases the input buffer, which is reused
		}
	} else if len(body) > 0 && string(body) != "null" {
		t.Body = bytes.Clone(body)
	}
	return t, nil
}

// query reads Query: an object of strings (or arrays, joined with commas), or a string holding
// such an object.
func (r *jsonReader) query() (map[string]string, error) {
	switch r.peek() {
	case 'n':
		return nil, r.literal("null")
	case '"':
		raw, err := r.raw()
		if err != nil {
			return nil, err
		}
		return decodeQuery(raw)
	}
	q := map[string]string{}
	err := r.object(func(key []byte) error {
		vals, err := r.stringValues()
		q[string(key)] = strings.Join(vals, ",")
		return err
	})
	return q, err
}

func (r *jsonReader) params() (map[string]*string, error) {
	if r.peek() == 'n' {
		return nil, r.literal("null")
	}
	m := map[string]*string{}
	err := r.object(func(key []byte) error {
		raw, err := r.raw()
		m[string(key)] = optionalString(raw)
		return err
	})
	return m, err
}

// stringValues reads a string, an array of strings, null, or any other value as its text.
func (r *jsonReader) stringValues() ([]string, error) {
	switch r.peek() {
	case '[':
		var vals []string
		err := r.array(func() error {
			s, err := r.stringBytes()
			vals = append(vals, string(s))
			return err
		})
		return vals, err
	case '"':
		s, err := r.stringBytes()
		return []string{string(s)}, err
	case 'n':
		return nil, r.literal("null")
	}
	raw, err := r.raw()
	return []string{string(raw)}, err
}

func (r *jsonReader) headers() (map[string][]string, error) {
	if r.peek() == 'n' {
		return nil, r.literal("null")
	}
	m := map[string][]string{}
	err := r.object(func(key []byte) error {
		vals, err := r.stringValues()
		m[string(key)] = vals
		return err
	})
	return m, err
}

// aliases reports whether b points into region.
func aliases(region, b []byte) bool {
	if len(b) == 0 || len(region) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&region[0]))
	return p >= lo && p < lo+uintptr(len(region))
}

// appendJSONBytes appends b as a JSON string; see appendJSONString.
func appendJSONBytes(dst, b []byte) []byte {
	return appendJSONString(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, like
// encoding/json; HTML characters are not escaped (the host does not care).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigit[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"

// replaceInvalidUTF8 replaces every invalid byte with U+FFFD, as encoding/json does.
func replaceInvalidUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\ufffd"...)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
