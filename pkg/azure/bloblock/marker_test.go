package bloblock

import (
	"net/url"
	"strings"
	"testing"
)

func TestMarkerName_Escaping_MatchesSpec(t *testing.T) {
	tests := []struct {
		graph, thread, want string
	}{
		{"echo_agent", "t1", "thread-locks/echo_agent/t1"},
		{"g", "a/b", "thread-locks/g/a%2Fb"},
		{"g/a", "b", "thread-locks/g%2Fa/b"},
		{"g", "a?b#c", "thread-locks/g/a%3Fb%23c"},
		{"g", "100%", "thread-locks/g/100%25"},
		{"g", "a b", "thread-locks/g/a%20b"},
		{"g", "Az09_.-~", "thread-locks/g/Az09_.-~"},
		{"g", "ü", "thread-locks/g/%C3%BC"},
		{"g", "..", "thread-locks/g/.."},
		{"", "", "thread-locks//"},
	}
	for _, tt := range tests {
		t.Run(tt.graph+"|"+tt.thread, func(t *testing.T) {
			if got := markerName(DefaultBlobPrefix, tt.graph, tt.thread); got != tt.want {
				t.Errorf("markerName(%q, %q) = %q, want %q", tt.graph, tt.thread, got, tt.want)
			}
		})
	}
}

func FuzzEscapeSegment(f *testing.F) {
	for _, s := range []string{"", "a/b", "%2F", "?#", "ünï", "\x00\xff", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := escapeSegment(s)
		if strings.ContainsAny(got, "/?#\\ ") {
			t.Fatalf("escapeSegment(%q) = %q contains a reserved character", s, got)
		}
		back, err := url.PathUnescape(got)
		if err != nil || back != s {
			t.Fatalf("escapeSegment(%q) = %q does not round-trip: %q, %v", s, got, back, err)
		}
	})
}
