package pyjson

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Repr and ReprList quote values in error messages as Python's repr does, so messages stay
// byte-identical (parity: docs/lineage.md).

// ReprList renders names like Python's repr of a list of str: ['a', 'b'].
func ReprList(names []string) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, n := range names {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(Repr(n))
	}
	sb.WriteByte(']')
	return sb.String()
}

// Repr renders s like Python's repr of a str: single quotes unless s contains a single quote
// and no double quote; backslash, the quote, \t \n \r escaped; other non-printable characters
// as \xNN, \uNNNN or \UNNNNNNNN.
func Repr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var sb strings.Builder
	sb.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&sb, `\x%02x`, s[i]) // Python would show a surrogate escape
			i++
			continue
		}
		i += size
		switch {
		case r == '\\' || r == rune(quote):
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r < 0x80 || unicode.IsPrint(r):
			sb.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			fmt.Fprintf(&sb, `\U%08x`, r)
		}
	}
	sb.WriteByte(quote)
	return sb.String()
}
