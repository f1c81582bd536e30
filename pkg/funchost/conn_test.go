package funchost

import (
	"strings"
	"testing"
)

func TestCLScanner_CountsContentLengthFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		text string
		want int
	}{
		{"one", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 1},
		{"any case", "POST / HTTP/1.1\r\ncontent-LENGTH: 5\r\nCONTENT-LENGTH: 5\r\n\r\n", 2},
		{"bare LF", "POST / HTTP/1.1\nContent-Length: 5\n\n", 1},
		{"with TE", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", 1},
		{"not at a line start", "POST / HTTP/1.1\r\nX-Content-Length: 5\r\n\r\n", 0},
		{"prefix only", "POST / HTTP/1.1\r\nContent-Lengthy: 5\r\nContent-Lengt\r\n\r\n", 0},
		{"a newline inside a near miss", "GET / HTTP/1.1\r\nContent-\nContent-Length:\r\n", 1},
		{"none", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 0},
	} {
		// Whole, and fed a byte at a time (a match across pieces).
		var whole clScanner
		if got := whole.scan([]byte(tc.text)); got != tc.want {
			t.Errorf("%s: scan = %d, want %d", tc.name, got, tc.want)
		}
		var bytewise clScanner
		got := 0
		for i := range len(tc.text) {
			got += bytewise.scan([]byte(tc.text[i : i+1]))
		}
		if got != tc.want {
			t.Errorf("%s: bytewise scan = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func FuzzCLScanner_PiecesAgreeWithWhole(f *testing.F) {
	f.Add("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 7)
	f.Add("\n\ncontent-length:\ncontent-length:", 1)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		var whole, pieces clScanner
		want := whole.scan([]byte(text))
		lower := []byte(text)
		for i, c := range lower {
			if 'A' <= c && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		if n := strings.Count(string(lower), clField); want != n {
			t.Fatalf("scan(%q) = %d, want %d", text, want, n)
		}
		if cut < 0 || cut > len(text) {
			return
		}
		if got := pieces.scan([]byte(text[:cut])) + pieces.scan([]byte(text[cut:])); got != want {
			t.Fatalf("scan(%q) in two pieces at %d = %d, want %d", text, cut, got, want)
		}
	})
}
