package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// searchKeyBuilder is a two-node graph over testState.
func searchKeyBuilder(t *testing.T) *ManifestBuilder[testState] {
	t.Helper()
	b := NewManifestBuilder[testState]("g")
	b.SetEntrypoint("a")
	if err := b.AddNode("a", nodeA, WithHandlerName("h.a"), WithNext("b")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode("b", nodeB, WithHandlerName("h.b"), Terminal()); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestManifestBuilder_SearchKeys_KeepTheHash: declared search keys are in the manifest, in
// order, and survive its JSON; they enter neither the canonical form nor the hash, so a graph
// that declares none keeps its hash, and declaring some makes no new version.
func TestManifestBuilder_SearchKeys_KeepTheHash(t *testing.T) {
	t.Parallel()
	plain, err := searchKeyBuilder(t).Build()
	if err != nil {
		t.Fatal(err)
	}
	b := searchKeyBuilder(t)
	if err := b.SearchKeys("name", "count"); err != nil {
		t.Fatal(err)
	}
	keyed, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := keyed.Manifest().SearchKeys; !slices.Equal(got, []string{"name", "count"}) {
		t.Fatalf("search keys %v", got)
	}
	if plain.Manifest().GraphHash != keyed.Manifest().GraphHash {
		t.Fatalf("hash %s with search keys, %s without", keyed.Manifest().GraphHash, plain.Manifest().GraphHash)
	}
	pc, _ := plain.Manifest().CanonicalTopology()
	kc, _ := keyed.Manifest().CanonicalTopology()
	if string(pc) != string(kc) {
		t.Fatalf("canonical forms differ:\n%s\n%s", pc, kc)
	}
	raw, _ := json.Marshal(keyed.Manifest())
	var back GraphManifest
	if err := json.Unmarshal(raw, &back); err != nil || !slices.Equal(back.SearchKeys, []string{"name", "count"}) {
		t.Fatalf("round trip %s: %v %v", raw, back.SearchKeys, err)
	}
	if raw, _ := json.Marshal(plain.Manifest()); strings.Contains(string(raw), "search_keys") {
		t.Fatalf("a manifest without search keys writes them: %s", raw)
	}
}

// TestManifestBuilder_SearchKeys_Errors: a name that is no field of the state, a bad name, a
// duplicate or a ninth key fail the builder, and Build reports it again.
func TestManifestBuilder_SearchKeys_Errors(t *testing.T) {
	t.Parallel()
	many := make([]string, 0, MaxSearchKeys+1)
	for i := range MaxSearchKeys + 1 {
		many = append(many, fmt.Sprintf("k%d", i))
	}
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{"missing"}, "search key 'missing' is not a field of state model testState"},
		{[]string{"a b"}, "invalid search key name 'a b': want 1 to 64 letters, digits, '_', '-' or '.'"},
		{[]string{""}, "invalid search key name '': want 1 to 64 letters, digits, '_', '-' or '.'"},
		{[]string{"name", "name"}, "duplicate search key 'name'"},
		{many, "search key 'k0' is not a field of state model testState"},
	} {
		b := searchKeyBuilder(t)
		err := b.SearchKeys(tt.names...)
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidGraph) {
			t.Errorf("SearchKeys(%q) = %v, want %q", tt.names, err, tt.want)
		}
		if _, err := b.Build(); err == nil || err.Error() != tt.want {
			t.Errorf("Build after SearchKeys(%q) = %v, want %q again", tt.names, err, tt.want)
		}
	}
}

// TestManifestBuilder_SearchKeys_AtMostMax: a graph declares at most MaxSearchKeys keys.
func TestManifestBuilder_SearchKeys_AtMostMax(t *testing.T) {
	t.Parallel()
	type wide struct {
		K0 string `json:"k0"`
		K1 string `json:"k1"`
		K2 string `json:"k2"`
		K3 string `json:"k3"`
		K4 string `json:"k4"`
		K5 string `json:"k5"`
		K6 string `json:"k6"`
		K7 string `json:"k7"`
		K8 string `json:"k8"`
	}
	b := NewManifestBuilder[wide]("w")
	if err := b.SearchKeys("k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"); err != nil {
		t.Fatal(err)
	}
	if err := b.SearchKeys("k8"); err == nil || err.Error() != "a graph declares at most 8 search keys" {
		t.Fatalf("a ninth key: %v", err)
	}
}
