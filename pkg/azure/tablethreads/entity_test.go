package tablethreads

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

func TestRowKey_EncodesForbiddenCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"abc-_.~9": "abc-_.~9",
		"a/b\\c#?": "a%2Fb%5Cc%23%3F",
		"it's 50%": "it%27s%2050%25",
	} {
		if got := rowKey(in); got != want {
			t.Errorf("rowKey(%q) = %q, want %q", in, got, want)
		}
	}
	if p := partitionKey("t1"); len(p) != 3 || p[0] != 't' || p != partitionKey("t1") {
		t.Errorf("partitionKey = %q", p)
	}
}

func TestEncode_RoundTripAndLimits(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 123456700, time.UTC)
	in := threads.Thread{ThreadID: "t/1", CreatedAt: at, UpdatedAt: at, Status: threads.StatusBusy, AssistantID: "g",
		Metadata: map[string]any{"k": "é"}, Values: json.RawMessage(`{"m": "` + strings.Repeat("x", 70000) + `"}`)}
	b, size, err := encode(in)
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	_ = json.Unmarshal(b, &e)
	for k, v := range e {
		if s, ok := v.(string); ok && utf16Len(s) > maxPropertyUnits {
			t.Errorf("property %s has %d UTF-16 units", k, utf16Len(s))
		}
	}
	if _, ok := e["values_json_2"]; !ok || size < 140000 {
		t.Errorf("values were not split across properties (size %d): %v", size, len(e))
	}
	out, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.ThreadID != in.ThreadID || !out.CreatedAt.Equal(at) || out.Status != in.Status || out.Metadata["k"] != "é" ||
		string(out.Values) != string(in.Values) {
		t.Fatalf("round trip: %+v", out)
	}
	in.Values = json.RawMessage(`"` + strings.Repeat("y", MaxEntityBytes/2) + `"`)
	if _, _, err := encode(in); !errors.Is(err, threads.ErrTooLarge) {
		t.Fatalf("oversized entity: %v", err)
	}
}
