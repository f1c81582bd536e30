package durable

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func buildVersion(t *testing.T, name, version string) GraphRegistration[testState] {
	t.Helper()
	b := NewManifestBuilder[testState](name, WithVersion(version))
	b.SetEntrypoint("a")
	if err := b.AddNode("a", nodeA, Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRegistry_Register_VersionsAndLookups(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	v1, v2, other := buildVersion(t, "g", "1"), buildVersion(t, "g", "2"), buildVersion(t, "h", "1")
	for _, g := range []Graph{v1, other, v2} {
		if err := r.Register(g); err != nil {
			t.Fatalf("Register %s: %v", g.Manifest().GraphName, err)
		}
	}
	err := r.Register(buildVersion(t, "g", "1"))
	want := "graph 'g' with hash '" + v1.Manifest().GraphHash + "' is already registered"
	if err == nil || err.Error() != want || !errors.Is(err, ErrGraphExists) {
		t.Fatalf("duplicate Register = %v, want %q", err, want)
	}
	if g, err := r.Latest("g"); err != nil || g.Manifest().Version != "2" {
		t.Fatalf("Latest(g) = %v, %v; want version 2", g, err)
	}
	if g, err := r.Lookup("g", v1.Manifest().GraphHash); err != nil || g.Manifest().Version != "1" {
		t.Fatalf("Lookup(g, v1) = %v, %v", g, err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"latest unknown", second(r.Latest("zz")), "unknown graph 'zz'"},
		{"lookup unknown hash", second(r.Lookup("g", "0000000000000000")), "unknown graph 'g' with hash '0000000000000000'"},
		{"lookup hash of other graph", second(r.Lookup("zz", v1.Manifest().GraphHash)), "unknown graph 'zz' with hash '" + v1.Manifest().GraphHash + "'"},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want || !errors.Is(tt.err, ErrUnknownGraph) {
			t.Errorf("%s: error = %v, want %q wrapping ErrUnknownGraph", tt.name, tt.err, tt.want)
		}
	}
	list := r.List()
	if len(list) != 2 || list[0].Manifest().GraphName != "g" || list[0].Manifest().Version != "2" || list[1].Manifest().GraphName != "h" {
		t.Fatalf("List = %v", list)
	}
	frags := manifests(r.Public()) // what runsapi's fragments show
	if len(frags) != 2 || frags[0].GraphHash != v2.Manifest().GraphHash || frags[1].GraphName != "h" {
		t.Fatalf("Fragments = %+v", frags)
	}
}

func second(_ Graph, err error) error { return err }

// manifests returns the manifests of graphs, in order.
func manifests(graphs []Graph) []GraphManifest {
	out := make([]GraphManifest, len(graphs))
	for i, g := range graphs {
		out[i] = g.Manifest()
	}
	return out
}

func TestRegistry_ConcurrentReads_RaceFree(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	g := buildVersion(t, "g", "1")
	if err := r.Register(g); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				lg, err := r.Latest("g")
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := lg.ExecuteNode(context.Background(), "a", []byte(`{"name":"x"}`)); err != nil {
					t.Error(err)
					return
				}
				_ = r.List()
			}
		}()
	}
	wg.Wait()
}

func TestRegistry_RegisterInternal_HiddenFromPublicViews(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	pub, in := buildVersion(t, "app", "1"), buildVersion(t, "fg_internal", "1")
	if err := r.Register(pub); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterInternal(in); err != nil {
		t.Fatal(err)
	}
	if !r.Internal("fg_internal") || r.Internal("app") || r.Internal("zz") || !r.HasInternal() {
		t.Fatalf("Internal marks wrong: fg_internal=%v app=%v", r.Internal("fg_internal"), r.Internal("app"))
	}
	if g, err := r.Latest("fg_internal"); err != nil || g.Manifest().GraphName != "fg_internal" {
		t.Fatalf("Latest(internal) = %v, %v; the engine must still resolve it", g, err)
	}
	if got := len(r.List()); got != 2 {
		t.Fatalf("List has %d graphs, want 2 (internal included)", got)
	}
	if pubs := r.Public(); len(pubs) != 1 || pubs[0].Manifest().GraphName != "app" {
		t.Fatalf("Public = %v, want only app", pubs)
	}
	if frags := manifests(r.Public()); len(frags) != 1 || frags[0].GraphName != "app" {
		t.Fatalf("Fragments = %+v, want only app", frags)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"public over internal", r.Register(buildVersion(t, "fg_internal", "2")), "graph 'fg_internal' is already registered as internal"},
		{"internal over public", r.RegisterInternal(buildVersion(t, "app", "2")), "graph 'app' is already registered as public"},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want || !errors.Is(tt.err, ErrGraphExists) {
			t.Errorf("%s: error = %v, want %q wrapping ErrGraphExists", tt.name, tt.err, tt.want)
		}
	}
	if err := r.RegisterInternal(buildVersion(t, "fg_internal", "2")); err != nil {
		t.Fatalf("a new version of an internal graph: %v", err)
	}
	if NewRegistry().HasInternal() {
		t.Fatal("an empty registry has internal graphs")
	}
}

// TestRegistry_Previous_KeptButNeverLatest: a version registered through Previous is
// resolvable by its hash and listed by Versions, but new runs never start on it, whatever the
// order of the calls; a name with only previous versions starts nothing.
func TestRegistry_Previous_KeptButNeverLatest(t *testing.T) {
	t.Parallel()
	v1, v2, v3 := buildVersion(t, "g", "1"), buildVersion(t, "g", "2"), buildVersion(t, "g", "3")
	for _, order := range [][]Graph{{Previous(v1), v2}, {v2, Previous(v1)}, {Previous(v1), v2, Previous(v3)}} {
		r := NewRegistry()
		for _, g := range order {
			if err := r.Register(g); err != nil {
				t.Fatal(err)
			}
		}
		if g, err := r.Latest("g"); err != nil || g.Manifest().Version != "2" {
			t.Fatalf("order %d: Latest = %v, %v; want version 2", len(order), g, err)
		}
		old, err := r.Lookup("g", v1.Manifest().GraphHash)
		if err != nil || old.Manifest().Version != "1" {
			t.Fatalf("Lookup(v1) = %v, %v", old, err)
		}
		if _, wrapped := old.(previous); wrapped {
			t.Fatal("Lookup returned the Previous wrapper, not the graph")
		}
		vs := r.Versions("g")
		if len(vs) != len(order) || vs[0].Manifest().Version != "2" {
			t.Fatalf("Versions = %d graphs, first %s; want %d, latest first", len(vs), vs[0].Manifest().Version, len(order))
		}
		if len(r.List()) != 1 || len(manifests(r.Public())) != 1 {
			t.Fatalf("List = %d graphs, want 1", len(r.List()))
		}
	}
	r := NewRegistry()
	if err := r.Register(Previous(Previous(v1))); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(v1); !errors.Is(err, ErrGraphExists) {
		t.Fatalf("v1 again as latest: %v, want ErrGraphExists", err)
	}
	if _, err := r.Latest("g"); !errors.Is(err, ErrUnknownGraph) {
		t.Fatalf("Latest of a draining name = %v, want ErrUnknownGraph", err)
	}
	if len(r.List()) != 0 || len(r.Versions("g")) != 1 || len(r.Versions("zz")) != 0 {
		t.Fatalf("List %d, Versions(g) %d, Versions(zz) %d", len(r.List()), len(r.Versions("g")), len(r.Versions("zz")))
	}
	if Previous(nil) != nil {
		t.Fatal("Previous(nil) is not nil")
	}
}
