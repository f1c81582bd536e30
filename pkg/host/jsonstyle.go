package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The contract writes two JSON styles (hosting.md section 1):
//
//   - compact: `{"a":1}`, non-ASCII raw, no HTML escaping (invoke, errors, health);
//   - Python json.dumps default: separators ", " and ": ", every non-ASCII character as a
//     lowercase \uXXXX escape (thread state, SSE data payloads).
//
// Both are produced from encoding/json's output, so Go values keep encoding/json's key order
// (struct field order; sorted map keys) and json.RawMessage keeps the caller's order.

// appendCompact appends the compact encoding of v to dst.
func appendCompact(dst []byte, v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, raw); err != nil {
			return dst, fmt.Errorf("compact raw JSON: %w", err)
		}
		return buf.Bytes(), nil
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, fmt.Errorf("encode JSON: %w", err)
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil // Encode adds a newline
}

// marshalCompact returns the compact encoding of v.
func marshalCompact(v any) ([]byte, error) { return appendCompact(nil, v) }

// appendDumps appends the json.dumps-style encoding of v to dst.
func appendDumps(dst []byte, v any) ([]byte, error) {
	compact, err := marshalCompact(v)
	if err != nil {
		return dst, err
	}
	return appendDumpsJSON(dst, compact), nil
}

// marshalDumps returns the json.dumps-style encoding of v.
func marshalDumps(v any) ([]byte, error) { return appendDumps(nil, v) }

// appendDumpsJSON re-writes valid JSON text src in json.dumps style: whitespace dropped,
// ", " and ": " separators, strings re-escaped with ensure_ascii. Numbers are kept verbatim.
func appendDumpsJSON(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case ',':
			dst = append(dst, ',', ' ')
			i++
		case ':':
			dst = append(dst, ':', ' ')
			i++
		case '"':
			j := stringEnd(src, i)
			dst = appendPyString(dst, src[i+1:j-1])
			i = j
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// stringEnd returns the index just past the string token starting at src[i].
func stringEnd(src []byte, i int) int {
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(src)
}

const hexDigits = "0123456789abcdef"

// appendPyString appends a JSON string in ensure_ascii style, given the body of a valid JSON
// string token (between the quotes, escapes still encoded).
func appendPyString(dst, body []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(body); {
		c := body[i]
		if c == '\\' {
			r, n := decodeEscape(body[i:])
			i += n
			dst = appendPyRune(dst, r)
			continue
		}
		if c < utf8.RuneSelf {
			dst = appendPyRune(dst, rune(c))
			i++
			continue
		}
		r, n := utf8.DecodeRune(body[i:])
		i += n
		dst = appendPyRune(dst, r)
	}
	return append(dst, '"')
}

// decodeEscape decodes the escape at the start of s, joining surrogate pairs.
func decodeEscape(s []byte) (rune, int) {
	if len(s) < 2 {
		return utf8.RuneError, len(s)
	}
	switch s[1] {
	case '"':
		return '"', 2
	case '\\':
		return '\\', 2
	case '/':
		return '/', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(s[2:])
		if r >= 0xd800 && r < 0xdc00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo := hex4(s[8:]); lo >= 0xdc00 && lo < 0xe000 {
				return (r-0xd800)<<10 + (lo - 0xdc00) + 0x10000, 12
			}
		}
		return r, 6
	}
	return utf8.RuneError, 2
}

func hex4(s []byte) rune {
	if len(s) < 4 {
		return utf8.RuneError
	}
	var r rune
	for _, c := range s[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		}
	}
	return r
}

// appendPyRune appends r as Python's json.dumps(ensure_ascii=True) writes it inside a string.
func appendPyRune(dst []byte, r rune) []byte {
	switch r {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	if r >= 0x20 && r <= 0x7e {
		return append(dst, byte(r))
	}
	if r > 0xffff {
		r -= 0x10000
		dst = appendU4(dst, 0xd800+(r>>10))
		return appendU4(dst, 0xdc00+(r&0x3ff))
	}
	return appendU4(dst, r)
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// pyRepr quotes s like Python's repr of a str: single quotes, or double quotes when s holds
// a single quote and no double quote; backslashes doubled; control characters escaped.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteByte(quote)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// isJSONObject reports whether the encoded value is a JSON object.
func isJSONObject(encoded []byte) bool {
	encoded = bytes.TrimLeft(encoded, " \t\r\n")
	return len(encoded) > 0 && encoded[0] == '{'
}
