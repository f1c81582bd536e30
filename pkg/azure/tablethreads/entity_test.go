package tablethreads

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
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
	b, size, err := encode(in, storedValues{inline: string(in.Values)}, ixState{})
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
	out, ref, _, err := decode(b)
	if err != nil || ref != "" {
		t.Fatal(err, ref)
	}
	if out.ThreadID != in.ThreadID || !out.CreatedAt.Equal(at) || out.Status != in.Status || out.Metadata["k"] != "é" ||
		string(out.Values) != string(in.Values) {
		t.Fatalf("round trip: %+v", out)
	}
	if _, _, err := encode(in, storedValues{inline: `"` + strings.Repeat("y", maxEntityBytes/2) + `"`}, ixState{}); !errors.Is(err, threads.ErrTooLarge) {
		t.Fatalf("oversized entity: %v", err)
	}
	// Spilled values leave only their blob's name in the entity.
	b, _, err = encode(in, storedValues{ref: "threads/t%2F1/values-x.json"}, ixState{})
	if err != nil {
		t.Fatal(err)
	}
	out, ref, _, err = decode(b)
	if err != nil || ref != "threads/t%2F1/values-x.json" || out.Values != nil {
		t.Fatalf("spilled values: ref %q, values %d bytes, %v", ref, len(out.Values), err)
	}
}

func TestValuesContainer_ValidName(t *testing.T) {
	for _, table := range []string{DefaultTable, "funcgraphthreads", "Threads" + strings.Repeat("x", 56)} {
		name := valuesContainer(table)
		if err := azure.ValidateContainerName(name); err != nil {
			t.Errorf("valuesContainer(%q) = %q: %v", table, name, err)
		}
	}
	if got := valuesPrefix(".."); got != "threads/%2E%2E/" {
		t.Errorf("valuesPrefix(..) = %q", got)
	}
}
