package pyjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Marshal returns the json.dumps-style encoding of v.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return AppendReformat(nil, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})), nil
}

// AppendReformat appends valid JSON text src to dst rewritten in json.dumps style: whitespace
// outside strings dropped, ", " and ": " separators, strings re-escaped. Numbers, literals and
// key order are kept. The result for invalid JSON is unspecified (but never panics).
func AppendReformat(dst, src []byte) []byte {
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
			if end, ok := plainString(src, i+1); ok {
				dst = append(dst, src[i:end]...) // printable ASCII, no escapes: already dumps style
				i = end
				continue
			}
			var s string
			s, i = readString(src, i+1)
			dst = AppendString(dst, s)
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// AppendString appends s as a json.dumps (ensure_ascii) string literal. Invalid UTF-8 bytes
// are written as \ufffd.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"':
			dst = append(dst, '\\', '"')
		case r == '\\':
			dst = append(dst, '\\', '\\')
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == '\b':
			dst = append(dst, '\\', 'b')
		case r == '\f':
			dst = append(dst, '\\', 'f')
		case r >= 0x20 && r < 0x7f:
			dst = append(dst, byte(r))
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			dst = appendU4(dst, hi, hex)
			dst = appendU4(dst, lo, hex)
		default:
			dst = appendU4(dst, r, hex)
		}
	}
	return append(dst, '"')
}

func appendU4(dst []byte, r rune, hex string) []byte {
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// plainString reports whether the string whose body starts at src[i] holds only printable
// ASCII without escapes, and returns the index just past its closing quote.
func plainString(src []byte, i int) (int, bool) {
	for ; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return 0, false
		}
	}
	return 0, false
}

// readString decodes the JSON string whose body starts at src[i] (just past the opening
// quote) and returns it with the index just past the closing quote.
func readString(src []byte, i int) (string, int) {
	var out []byte
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return string(out), i + 1
		case c == '\\' && i+1 < len(src):
			r, n := decodeEscape(src[i:])
			out = utf8.AppendRune(out, r)
			i += n
		default:
			out = append(out, c)
			i++
		}
	}
	return string(out), i
}

// decodeEscape decodes the escape at the start of s (s[0] == '\\'), joining a surrogate pair.
// It returns the rune and the number of bytes consumed.
func decodeEscape(s []byte) (rune, int) {
	switch s[1] {
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return utf8.RuneError, 2
		}
		if utf16.IsSurrogate(r) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if r2, ok := hex4(s[8:]); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						return dec, 12
					}
				}
			}
			return utf8.RuneError, 6
		}
		return r, 6
	}
	return rune(s[1]), 2 // \" \\ \/
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
