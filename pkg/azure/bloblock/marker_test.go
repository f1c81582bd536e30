package bloblock

import "testing"

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
		{"g", "..", "thread-locks/g/%2E%2E"},
		{".", "t", "thread-locks/%2E/t"},
		{"g", "...", "thread-locks/g/..."},
		{"g", "a..", "thread-locks/g/a.."},
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
