package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
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
