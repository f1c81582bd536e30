package jsonenc

import (
	"bytes"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The request paths read JSON with jsontext and take a string's text out of the raw value
// the decoder validated: these are the one way they do it, as encoding/json decodes a
// string (escapes resolved, invalid UTF-8 and lone surrogates replaced by U+FFFD).

// Plain returns the text between the quotes of the JSON string v when it needs no decoding
// (no escape, valid UTF-8), and false otherwise.
func Plain(v []byte) ([]byte, bool) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, true
	}
	return nil, false
}

// Unquote returns the text of v, a JSON string a decoder validated: the plain text of v
// itself (see Plain), else decoded and appended to dst.
func Unquote(dst, v []byte) []byte {
	if inner, ok := Plain(v); ok {
		return inner
	}
	return AppendUnquoted(dst, v)
}

// UnquoteString is the text of v, a JSON string a decoder validated, as a new string.
func UnquoteString(v []byte) string {
	if inner, ok := Plain(v); ok {
		return string(inner)
	}
	return string(AppendUnquoted(nil, v))
}

// AppendUnquoted appends the text of v, a JSON string a decoder validated, to dst. Valid
// UTF-8 whose escapes are all of one character (what a JSON document sent as a string has:
// quotes and backslashes) is decoded here; the rest by jsontext.AppendUnquote.
func AppendUnquoted(dst, v []byte) []byte {
	inner := v[1 : len(v)-1]
	if utf8.Valid(inner) {
		if out, ok := appendSimpleEscapes(dst, inner); ok {
			return out
		}
	}
	out, _ := jsontext.AppendUnquote(dst, v) // only invalid UTF-8 fails, and is replaced
	return out
}

// appendSimpleEscapes appends inner, the text between the quotes of a validated JSON string,
// decoded, and reports true; false (dst partly written) at a \u escape.
func appendSimpleEscapes(dst, inner []byte) ([]byte, bool) {
	start := len(dst)
	for {
		i := bytes.IndexByte(inner, '\\')
		if i < 0 {
			return append(dst, inner...), true
		}
		dst = append(dst, inner[:i]...)
		c := inner[i+1] // the decoder accepted the string: an escape is whole
		switch c {
		case '"', '\\', '/':
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default:
			return dst[:start], false
		}
		dst = append(dst, c)
		inner = inner[i+2:]
	}
}
