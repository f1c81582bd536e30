package checkpoint_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/checkpoint/checkpointtest"
)

func TestMemory_Conformance(t *testing.T) {
	checkpointtest.RunSaverTests(t, func(*testing.T) checkpoint.Saver { return checkpoint.NewMemory(checkpoint.MemoryOptions{}) })
}

func TestMemory_ForgetsLeastRecentlyWrittenThreads(t *testing.T) {
	ctx := t.Context()
	m := checkpoint.NewMemory(checkpoint.MemoryOptions{MaxThreads: 10, MaxBytes: 250})
	val := func(n int) map[string]checkpoint.Value {
		return map[string]checkpoint.Value{"a": {SerdeType: checkpoint.SerdeJSON, Data: make([]byte, n)}}
	}
	put := func(tid string, n int) {
		t.Helper()
		cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelVersions: map[string]string{"a": checkpoint.NextVersion("")}}
		if err := m.Put(ctx, tid, "", cp, val(n)); err != nil {
			t.Fatal(err)
		}
	}
	put("old", 100)
	put("mid", 100)
	put("old", 10) // old is now the most recently written
	put("new", 100)
	if _, err := m.Get(ctx, checkpoint.Ref{ThreadID: "mid"}); err == nil {
		t.Fatal("mid survived; want it forgotten as the least recently written thread")
	}
	for _, tid := range []string{"old", "new"} {
		if _, err := m.Get(ctx, checkpoint.Ref{ThreadID: tid}); err != nil {
			t.Fatalf("%s: %v", tid, err)
		}
	}
	if b := m.Bytes(); b > 250 {
		t.Fatalf("Bytes = %d; want at most 250", b)
	}
	// A thread alone above the budget is kept (the caller bounds one thread).
	put("huge", 400)
	if _, err := m.Get(ctx, checkpoint.Ref{ThreadID: "huge"}); err != nil {
		t.Fatal(err)
	}
}

func TestNextVersion_SortsAndCounts(t *testing.T) {
	v1 := checkpoint.NextVersion("")
	v2 := checkpoint.NextVersion(v1)
	if len(v1) != 49 || v1[:32] != "00000000000000000000000000000001" || v1[32] != '.' {
		t.Fatalf("NextVersion(\"\") = %q", v1)
	}
	if v2[:32] != "00000000000000000000000000000002" || v2 <= v1 {
		t.Fatalf("NextVersion(%q) = %q", v1, v2)
	}
}

func TestEscape_KeepsUnreservedOnly(t *testing.T) {
	if got := checkpoint.Escape("a-Z_0.~/?#% é"); got != "a-Z_0.~%2F%3F%23%25%20%C3%A9" {
		t.Fatalf("Escape = %q", got)
	}
}

// A whole "." or ".." is escaped too, so no id becomes a dot segment of a blob name.
func TestEscape_DotSegments(t *testing.T) {
	for in, want := range map[string]string{".": "%2E", "..": "%2E%2E", "...": "...", ".a": ".a", "a..": "a.."} {
		if got := checkpoint.Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a/b", "%2F", "?#", "ünï", "\x00\xff", " ", ".", "..", "%2E"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := checkpoint.Escape(s)
		if strings.ContainsAny(got, "/?#\\ ") || got == "." || got == ".." {
			t.Fatalf("Escape(%q) = %q is not one plain segment", s, got)
		}
		back, err := url.PathUnescape(got)
		if err != nil || back != s {
			t.Fatalf("Escape(%q) = %q does not round-trip: %q, %v", s, got, back, err)
		}
	})
}
