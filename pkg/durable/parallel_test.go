package durable

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

func TestParallel_Normalize(t *testing.T) {
	big := `"` + strings.Repeat("x", MaxBranchItemBytes) + `"`
	many := make([]Branch, MaxBranches+1)
	for i := range many {
		many[i] = Branch{Node: "a"}
	}
	tests := []struct {
		name    string
		in      RouteDecision
		want    RouteDecision
		wantErr string
	}{
		{"parallel", Parallel("j", "a", "b"),
			RouteDecision{Action: ActionParallel, JoinNode: "j", Branches: []Branch{{Node: "a", Item: json.RawMessage("null")}, {Node: "b", Item: json.RawMessage("null")}}}, ""},
		{"map compacts items", RouteDecision{Action: ActionParallel, JoinNode: "j", NextNode: "x", Branches: []Branch{{Node: "a", Item: json.RawMessage(`{ "k" : [1, 2] }`)}}},
			RouteDecision{Action: ActionParallel, JoinNode: "j", Branches: []Branch{{Node: "a", Item: json.RawMessage(`{"k":[1,2]}`)}}}, ""},
		{"no branches", Parallel("j"), RouteDecision{Action: ActionParallel, JoinNode: "j", Branches: []Branch{}}, ""},
		{"next drops branches", RouteDecision{Action: ActionNext, NextNode: "a", JoinNode: "j", Branches: []Branch{{Node: "b"}}}, Next("a"), ""},
		{"no join", Parallel("", "a"), RouteDecision{}, "action 'parallel' requires join_node"},
		{"no node", Parallel("j", "a", ""), RouteDecision{}, "parallel branch 1 requires a node"},
		{"bad item", RouteDecision{Action: ActionParallel, JoinNode: "j", Branches: []Branch{{Node: "a", Item: json.RawMessage(`{`)}}}, RouteDecision{}, "parallel branch 0 item is not valid JSON"},
		{"big item", RouteDecision{Action: ActionParallel, JoinNode: "j", Branches: []Branch{{Node: "a", Item: json.RawMessage(big)}}}, RouteDecision{},
			"parallel branch 0 item of 32770 bytes is above the limit of 32768 bytes"},
		{"too wide", RouteDecision{Action: ActionParallel, JoinNode: "j", Branches: many}, RouteDecision{}, "parallel fan-out of 257 branches is above the limit of 256"},
		{"map of no slice", Map("j", "a", 3), RouteDecision{}, "durable.Map needs a slice of items, got int"},
		{"map of nil", Map("j", "a", nil), RouteDecision{}, "durable.Map needs a slice of items, got <nil>"},
		{"map of bad item", Map("j", "a", []any{1, func() {}}), RouteDecision{}, "encode item 1 of durable.Map: json: unsupported type: func()"},
		{"map too wide", Map("j", "a", make([]int, MaxBranches+1)), RouteDecision{}, "parallel fan-out of 257 branches is above the limit of 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.normalize()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalidRouteDecision) {
					t.Fatalf("normalize() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("normalize() = %#v, %v\nwant %#v", got, err, tt.want)
			}
		})
	}
}

func TestMap_OneBranchPerItem(t *testing.T) {
	d, err := Map("join", "work", []struct {
		ID int `json:"id"`
	}{{1}, {2}}).normalize()
	if err != nil {
		t.Fatal(err)
	}
	want := []Branch{{Node: "work", Item: json.RawMessage(`{"id":1}`)}, {Node: "work", Item: json.RawMessage(`{"id":2}`)}}
	if d.JoinNode != "join" || !reflect.DeepEqual(d.Branches, want) {
		t.Fatalf("Map = %+v", d)
	}
}

func TestParallel_JSONForm(t *testing.T) {
	d, _ := Map("j", "w", []int{1, 2}).WithNote("fan").normalize()
	raw, err := json.Marshal(d)
	want := `{"action":"parallel","next_node":null,"event_name":null,"resume_node":null,"note":"fan","join_node":"j","branches":[{"node":"w","item":1},{"node":"w","item":2}]}`
	if err != nil || string(raw) != want {
		t.Fatalf("Marshal = %s, %v\nwant %s", raw, err, want)
	}
	var back RouteDecision
	if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	// A route handler may return the decision as an object.
	got, err := normalizeRouteResult(map[string]any{"action": "parallel", "join_node": "j", "branches": []any{map[string]any{"node": "a"}}}, NodeDefinition{})
	if err != nil || got.JoinNode != "j" || len(got.Branches) != 1 || string(got.Branches[0].Item) != "null" {
		t.Fatalf("from a map: %+v, %v", got, err)
	}
	// The other actions keep their five keys.
	if raw, _ := json.Marshal(Next("a")); string(raw) != `{"action":"next","next_node":"a","event_name":null,"resume_node":null,"note":null}` {
		t.Fatalf("next = %s", raw)
	}
}

func TestStateUpdate(t *testing.T) {
	got, err := stateUpdate(json.RawMessage(`{"a":1,"b":[1, 2],"c":"x"}`), json.RawMessage(`{"a":1,"b":[1,2,3],"c":"x","d":{}}`))
	if err != nil || string(got) != `{"b":[1,2,3],"d":{}}` {
		t.Fatalf("StateUpdate = %s, %v", got, err)
	}
	if got, err := stateUpdate(json.RawMessage(`{"a":1}`), json.RawMessage(`{"a":1}`)); err != nil || string(got) != `{}` {
		t.Fatalf("no change = %s, %v", got, err)
	}
	if _, err := stateUpdate(json.RawMessage(`[]`), json.RawMessage(`{}`)); err == nil {
		t.Fatal("a list is no state")
	}
}

func TestJoinBranches(t *testing.T) {
	base := json.RawMessage(`{"list":["a"],"map":{"x":1},"one":0,"two":""}`)
	res := func(i int, u string) graphrun.BranchResult {
		return graphrun.BranchResult{Index: i, Update: json.RawMessage(u)}
	}
	reducers := map[string]Reducer{"list": Append, "map": MergeKeys}
	tests := []struct {
		name    string
		results []graphrun.BranchResult
		want    string
		wantErr string
	}{
		{"nothing", nil, `{"list":["a"],"map":{"x":1},"one":0,"two":""}`, ""},
		{"fields of their own", []graphrun.BranchResult{res(1, `{"two":"b"}`), res(0, `{"one":7}`)}, `{"list":["a"],"map":{"x":1},"one":7,"two":"b"}`, ""},
		{"append in index order, whole lists and new elements alike",
			[]graphrun.BranchResult{res(2, `{"list":["c"]}`), res(0, `{"list":["a","b"]}`), res(1, `{"list":["a","x","y"]}`)},
			`{"list":["a","b","x","y","c"],"map":{"x":1},"one":0,"two":""}`, ""},
		{"merge keys, later branch wins, nothing deleted",
			[]graphrun.BranchResult{res(1, `{"map":{"x":1,"z":3}}`), res(0, `{"map":{"y":2,"z":9}}`), res(2, `{"map":{}}`)},
			`{"list":["a"],"map":{"x":1,"y":2,"z":3},"one":0,"two":""}`, ""},
		{"new field", []graphrun.BranchResult{res(0, `{"new":true}`)}, `{"list":["a"],"map":{"x":1},"one":0,"two":"","new":true}`, ""},
		{"conflict", []graphrun.BranchResult{res(3, `{"one":1}`), res(1, `{"one":2}`), res(2, `{"two":"z"}`)}, "",
			"branches 1 and 3 both update field 'one', which has no reducer (declare one with ManifestBuilder.Reduce)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := joinBranches(base, tt.results, reducers)
			if tt.wantErr != "" {
				var ce *BranchConflictError
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrBranchConflict) || !errors.As(err, &ce) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("JoinBranches = %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestJoinBranches_ReducerFailures(t *testing.T) {
	base := json.RawMessage(`{"a":1}`)
	results := []graphrun.BranchResult{{Index: 0, Update: json.RawMessage(`{"a":2}`)}}
	for name, r := range map[string]Reducer{
		"error":   ReducerFunc(func(json.RawMessage, []json.RawMessage) (json.RawMessage, error) { return nil, errors.New("no") }),
		"panic":   ReducerFunc(func(json.RawMessage, []json.RawMessage) (json.RawMessage, error) { panic("boom") }),
		"invalid": ReducerFunc(func(json.RawMessage, []json.RawMessage) (json.RawMessage, error) { return json.RawMessage("{"), nil }),
		"append":  Append, // 1 is no list
	} {
		_, err := joinBranches(base, results, map[string]Reducer{"a": r})
		var re *ReducerError
		if !errors.As(err, &re) || re.Field != "a" || !strings.HasPrefix(err.Error(), "reducer of field 'a': ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	sum := ReducerFunc(func(base json.RawMessage, updates []json.RawMessage) (json.RawMessage, error) {
		var total, v int
		_ = json.Unmarshal(base, &total)
		for _, u := range updates {
			_ = json.Unmarshal(u, &v)
			total += v
		}
		return json.Marshal(total)
	})
	got, err := joinBranches(base, append(results, graphrun.BranchResult{Index: 1, Update: json.RawMessage(`{"a":5}`)}), map[string]Reducer{"a": sum})
	if err != nil || string(got) != `{"a":8}` {
		t.Fatalf("custom reducer: %s, %v", got, err)
	}
}

type fanModel struct {
	Items []string       `json:"items"`
	Seen  map[string]int `json:"seen"`
	Count int            `json:"count"`
}

func (m fanModel) Validate() error {
	if m.Count < 0 {
		return errors.New("count must not be negative")
	}
	return nil
}

func fanBuilder(t *testing.T) *ManifestBuilder[fanModel] {
	t.Helper()
	b := NewManifestBuilder[fanModel]("fan")
	b.SetEntrypoint("a")
	if err := b.AddNode("a", func(context.Context, fanModel) (any, error) { return nil, nil }, WithHandlerName("fan.a"), Terminal()); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestManifestBuilder_Reduce(t *testing.T) {
	plain, err := fanBuilder(t).Build()
	if err != nil {
		t.Fatal(err)
	}
	b := fanBuilder(t)
	if err := b.Reduce("items", Append); err != nil {
		t.Fatal(err)
	}
	if err := b.Reduce("seen", MergeKeys); err != nil {
		t.Fatal(err)
	}
	reduced, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	canon, _ := reduced.Manifest().CanonicalTopology()
	if !strings.Contains(string(canon), `},"reducers":{"items":"append","seen":"merge_keys"},"state_model_name":`) {
		t.Fatalf("canonical form %s", canon)
	}
	if pc, _ := plain.Manifest().CanonicalTopology(); strings.Contains(string(pc), "reducers") || plain.Manifest().GraphHash == reduced.Manifest().GraphHash {
		t.Fatalf("a graph without reducers: %s (hash %s vs %s)", pc, plain.Manifest().GraphHash, reduced.Manifest().GraphHash)
	}
	if h, _ := reduced.Manifest().ComputeHash(); h != reduced.Manifest().GraphHash {
		t.Fatalf("hash %s, computed %s", reduced.Manifest().GraphHash, h)
	}
	raw, _ := json.Marshal(reduced.Manifest())
	var back GraphManifest
	if err := json.Unmarshal(raw, &back); err != nil || back.Reducers["items"] != "append" {
		t.Fatalf("manifest round trip: %v %v", back.Reducers, err)
	}
	if h, _ := back.ComputeHash(); h != reduced.Manifest().GraphHash {
		t.Fatalf("decoded manifest hashes %s, want %s", h, reduced.Manifest().GraphHash)
	}
	sum := ReducerFunc(func(json.RawMessage, []json.RawMessage) (json.RawMessage, error) { return nil, nil })
	for _, tt := range []struct {
		field string
		r     Reducer
		want  string
	}{
		{"items", nil, "reducer of field 'items' cannot be nil"},
		{"nope", Append, "reducer field 'nope' is not a field of state model fanModel"},
		{"count", Append, "reducer 'append' needs a list field: field 'count' is int"},
		{"items", MergeKeys, "reducer 'merge_keys' needs a map field: field 'items' is []string"},
	} {
		b := fanBuilder(t)
		if err := b.Reduce(tt.field, tt.r); err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidGraph) {
			t.Errorf("Reduce(%s) = %v, want %q", tt.field, err, tt.want)
		}
		if _, err := b.Build(); err == nil || err.Error() != tt.want {
			t.Errorf("Build after Reduce(%s) = %v", tt.field, err)
		}
	}
	b = fanBuilder(t)
	_ = b.Reduce("count", sum)
	if err := b.Reduce("count", sum); err == nil || err.Error() != "duplicate reducer for field 'count'" {
		t.Errorf("duplicate: %v", err)
	}
	b = fanBuilder(t)
	_ = b.Reduce("count", sum)
	g, _ := b.Build()
	if name := g.Manifest().Reducers["count"]; name != "custom" {
		t.Errorf("ReducerFunc named %q, want custom (not its Go name, which a refactor changes)", name)
	}
}

func TestGraphRegistration_Join_ValidatesMergedState(t *testing.T) {
	b := fanBuilder(t)
	_ = b.Reduce("items", Append)
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	base := json.RawMessage(`{"items":["a"],"seen":{},"count":0}`)
	got, err := g.r.Join(t.Context(), base, []graphrun.BranchResult{{Index: 1, Update: json.RawMessage(`{"items":["a","c"]}`)}, {Index: 0, Update: json.RawMessage(`{"items":["a","b"],"count":2}`)}})
	if err != nil || string(got) != `{"items":["a","b","c"],"seen":{},"count":2}` {
		t.Fatalf("Join = %s, %v", got, err)
	}
	_, err = g.r.Join(t.Context(), base, []graphrun.BranchResult{{Index: 0, Update: json.RawMessage(`{"count":-1}`)}})
	if !errors.Is(err, ErrInvalidState) {
		t.Fatalf("an invalid merged state: %v", err)
	}
}

func TestParallel_CheckTargets(t *testing.T) {
	b := NewManifestBuilder[fanModel]("fan")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", func(context.Context, fanModel) (any, error) { return nil, nil }, WithHandlerName("fan.a"),
		WithRoute(func(_ context.Context, s fanModel) (any, error) { return Parallel(s.Items[0], s.Items[1:]...), nil }), WithRouteName("fan.r"))
	_ = b.AddNode("b", func(context.Context, fanModel) (any, error) { return nil, nil }, WithHandlerName("fan.b"), Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for items, want := range map[string]string{
		`["b","a","b"]`: "",
		`["x","a"]`:     "route decision references unknown node 'x' in graph 'fan'",
		`["b","a","y"]`: "route decision references unknown node 'y' in graph 'fan'",
	} {
		_, err := g.ResolveRoute(t.Context(), "a", json.RawMessage(`{"items":`+items+`}`))
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want || !errors.Is(err, ErrUnknownNode))) {
			t.Errorf("%s: %v, want %q", items, err, want)
		}
	}
}

func TestBranchContext(t *testing.T) {
	ctx := t.Context()
	if _, err := BranchItem[int](ctx); !errors.Is(err, ErrNotInBranch) {
		t.Fatalf("outside a branch: %v", err)
	}
	ctx = graphrun.WithBranch(ctx, BranchInfo{Index: 2, Count: 3, Node: "n", Item: json.RawMessage(`{"k":5}`)})
	v, err := BranchItem[struct{ K int }](ctx)
	if err != nil || v.K != 5 {
		t.Fatalf("item %+v, %v", v, err)
	}
	if _, err := BranchItem[string](ctx); err == nil || !strings.HasPrefix(err.Error(), "decode item of branch 2: ") {
		t.Fatalf("wrong type: %v", err)
	}
	info := StepInfo{RunID: "r", Nonce: "n", Step: 4, Branch: 3}
	if k := info.IdempotencyKey(); k != "r:1.n:4:b2" {
		t.Fatalf("key %s", k)
	}
	info.Branch = 0
	if k := info.IdempotencyKey(); k != "r:1.n:4" {
		t.Fatalf("key outside a branch %s", k)
	}
}
