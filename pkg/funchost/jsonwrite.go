package funchost

import (
	"unicode/utf8"
	"unsafe"
)

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
		if plainByte[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
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

// plainByte marks the bytes appendJSONString copies as they are: ASCII but for control
// characters, '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

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
