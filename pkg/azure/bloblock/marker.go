package bloblock

import "strings"

// DefaultBlobPrefix is where marker blobs live when Options.BlobPrefix is empty.
const DefaultBlobPrefix = "thread-locks/"

// markerName returns the marker blob for one key: prefix + enc(graph) + "/" + enc(thread).
func markerName(prefix, graphName, threadID string) string {
	return prefix + escapeSegment(graphName) + "/" + escapeSegment(threadID)
}

// escapeSegment percent-encodes every byte except ASCII letters, digits and "_.-~", so no
// input can add a path separator, query or fragment to a blob name, and distinct inputs give
// distinct outputs.
func escapeSegment(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0x0f])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '.' || c == '-' || c == '~'
}
