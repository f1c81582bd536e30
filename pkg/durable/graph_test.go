package durable

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// buildGraphUnderTest: a → (route) → b → c (terminal); "solo" has no edges; "fb" routes with a
// static fallback. Routes read Name to decide.
func buildGraphUnderTest(t testing.TB) GraphRegistration[testState] {
	t.Helper()
	b := NewManifestBuilder[testState]("g")
	b.SetEntrypoint("a")
	route := func(_ context.Context, s testState) (any, error) {
		switch s.Name {
		case "nil":
			return nil, nil
		case "string":
			return "b", nil
		case "complete":
			return "__complete__", nil
		case "wait":
			return WaitForEvent("go", "b"), nil
		case "badnode":
			return Next("nowhere"), nil
		case "badresume":
			return WaitForEvent("go", "nowhere"), nil
		case "map":
			return Update{"action": "next", "next_node": "c"}, nil
		case "int":
			return 1, nil
		case "invalid":
			return RouteDecision{Action: ActionWaitForEvent, EventName: "go"}, nil
		case "error":
			return nil, errors.New("route exploded")
		case "panic":
			panic("boom")
		}
		return Next("b"), nil
	}
	steps := []error{
		b.AddNode("a", func(_ context.Context, s testState) (any, error) {
			if s.Name == "fail" {
				return nil, errors.New("node a exploded")
			}
			if s.Name == "badresult" {
				return 42, nil
			}
			return Update{"count": s.Count + 1, "tags": append(s.Tags, "a")}, nil
		}, WithHandlerName("h.a"), WithRoute(route), WithRouteName("h.route")),
		b.AddNode("b", func(_ context.Context, s testState) (any, error) {
			s.Count *= 10
			return s, nil
		}, WithHandlerName("h.b"), WithNext("c")),
		b.AddNode("c", func(context.Context, testState) (any, error) { return nil, nil }, WithHandlerName("h.c"), Terminal()),
		b.AddNode("solo", func(context.Context, testState) (any, error) { panic("solo panicked") }, WithHandlerName("h.solo")),
		b.AddNode("fb", nodeA, WithRoute(routeA), WithNext("c")),
		b.AddEventHandler("go", func(_ context.Context, s testState, payload json.RawMessage) (any, error) {
			if string(payload) == "null" {
				return Update{"note": "no payload"}, nil
			}
			return json.RawMessage(`{"note":` + string(payload) + `}`), nil
		}),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	reg, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestGraphRegistration_ExecuteNode_MergesAndDumps(t *testing.T) {
	t.Parallel()
	var g Graph = buildGraphUnderTest(t)
	tests := []struct {
		name    string
		node    string
		state   string
		want    string
		wantErr string
		is      error
	}{
		{"update merged", "a", `{"name":"x","count":"1","zzz":1}`, `{"name":"x","count":2,"tags":["a"],"note":null}`, "", nil},
		{"state replaced", "b", `{"name":"x","count":3}`, `{"name":"x","count":30,"tags":[],"note":null}`, "", nil},
		{"nil keeps state", "c", `{"name":"x","note":"n"}`, `{"name":"x","count":0,"tags":[],"note":"n"}`, "", nil},
		{"unknown node", "zz", `{"name":"x"}`, "", "unknown node 'zz' in graph 'g'", ErrUnknownNode},
		{"invalid state", "a", `{"count":1}`, "", "validate state testState: field 'name': field required", ErrInvalidState},
		{"handler error message kept", "a", `{"name":"fail"}`, "", "node a exploded", nil},
		{"unsupported result", "a", `{"name":"badresult"}`, "", "unsupported state merge result: int", ErrUnsupportedResult},
		{"panic becomes error", "solo", `{"name":"x"}`, "", "node handler panicked: solo panicked", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := g.ExecuteNode(t.Context(), tt.node, json.RawMessage(tt.state))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ExecuteNode error = %v, want %q", err, tt.wantErr)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Fatalf("ExecuteNode error %v does not wrap %v", err, tt.is)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("ExecuteNode = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestGraphRegistration_ExecuteNode_HandlerErrorTyped(t *testing.T) {
	t.Parallel()
	g := buildGraphUnderTest(t)
	_, err := g.ExecuteNode(t.Context(), "a", json.RawMessage(`{"name":"fail"}`))
	var he *HandlerError
	if !errors.As(err, &he) || he.Kind != "node" || he.Name != "a" {
		t.Fatalf("error %v is not a node HandlerError for a", err)
	}
}

func TestGraphRegistration_ResolveRoute_FollowsSection6(t *testing.T) {
	t.Parallel()
	g := buildGraphUnderTest(t)
	tests := []struct {
		name    string
		node    string
		state   string
		want    RouteDecision
		wantErr string
	}{
		{"terminal completes without state", "c", `not json`, Complete(""), ""},
		{"static next without state", "b", ``, Next("c"), ""},
		{"implicit completion", "solo", `{}`, Complete("implicit completion: no outgoing edge"), ""},
		{"route nil no static", "a", `{"name":"nil"}`, Complete("route handler returned None"), ""},
		{"route nil static fallback", "fb", `{"name":"x"}`, Next("c"), ""},
		{"route string", "a", `{"name":"string"}`, Next("b"), ""},
		{"route complete string", "a", `{"name":"complete"}`, Complete(""), ""},
		{"route wait", "a", `{"name":"wait"}`, WaitForEvent("go", "b"), ""},
		{"route map", "a", `{"name":"map"}`, Next("c"), ""},
		{"unknown next target", "a", `{"name":"badnode"}`, RouteDecision{}, "route decision references unknown node 'nowhere' in graph 'g'"},
		{"unknown resume target", "a", `{"name":"badresume"}`, RouteDecision{}, "route decision references unknown resume_node 'nowhere' in graph 'g'"},
		{"unsupported", "a", `{"name":"int"}`, RouteDecision{}, "unsupported route decision: int"},
		{"invalid decision", "a", `{"name":"invalid"}`, RouteDecision{}, "action 'wait_for_event' requires both event_name and resume_node"},
		{"route error", "a", `{"name":"error"}`, RouteDecision{}, "route exploded"},
		{"route panic", "a", `{"name":"panic"}`, RouteDecision{}, "route handler panicked: boom"},
		{"invalid state", "a", `{}`, RouteDecision{}, "validate state testState: field 'name': field required"},
		{"unknown node", "zz", `{}`, RouteDecision{}, "unknown node 'zz' in graph 'g'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := g.ResolveRoute(t.Context(), tt.node, json.RawMessage(tt.state))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ResolveRoute error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ResolveRoute = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestGraphRegistration_ApplyEvent_MergesPayload(t *testing.T) {
	t.Parallel()
	g := buildGraphUnderTest(t)
	tests := []struct {
		name    string
		event   string
		payload string
		want    string
		wantErr string
	}{
		{"string payload", "go", `"hi"`, `{"name":"x","count":0,"tags":[],"note":"hi"}`, ""},
		{"null payload", "go", `null`, `{"name":"x","count":0,"tags":[],"note":"no payload"}`, ""},
		{"empty payload is null", "go", ``, `{"name":"x","count":0,"tags":[],"note":"no payload"}`, ""},
		{"payload type error", "go", `5`, "", "validate state testState: field 'note': expected string, got JSON number"},
		{"unknown event", "stop", `{}`, "", "unknown event handler 'stop'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := g.ApplyEvent(t.Context(), tt.event, json.RawMessage(`{"name":"x"}`), json.RawMessage(tt.payload))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ApplyEvent error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("ApplyEvent = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	if _, err := g.ApplyEvent(t.Context(), "stop", nil, nil); !errors.Is(err, ErrUnknownEvent) {
		t.Fatalf("unknown event error %v does not wrap ErrUnknownEvent", err)
	}
}

func TestGraphRegistration_ZeroValue_ErrorsInsteadOfPanicking(t *testing.T) {
	t.Parallel()
	var g GraphRegistration[testState]
	if _, err := g.ExecuteNode(t.Context(), "a", nil); err == nil {
		t.Fatal("ExecuteNode on zero value succeeded")
	}
	if _, err := g.ResolveRoute(t.Context(), "a", nil); err == nil {
		t.Fatal("ResolveRoute on zero value succeeded")
	}
	if _, err := g.ApplyEvent(t.Context(), "a", nil, nil); err == nil {
		t.Fatal("ApplyEvent on zero value succeeded")
	}
	if m := g.Manifest(); m.GraphName != "" {
		t.Fatalf("Manifest on zero value = %+v", m)
	}
}

func TestGraphManifest_JSON_SnakeCaseOrderedNodes(t *testing.T) {
	t.Parallel()
	m := buildGraphUnderTest(t).Manifest()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"graph_name":"g","version":"0.1.0","graph_hash":"` + m.GraphHash + `","state_model_name":"testState","entrypoint":"a","nodes":{"a":{"name":"a","handler_name":"h.a","next_node":null,"route_handler_name":"h.route","terminal":false},"b":{"name":"b","handler_name":"h.b","next_node":"c","route_handler_name":null,"terminal":false},"c":{"name":"c","handler_name":"h.c","next_node":null,"route_handler_name":null,"terminal":true},"solo":{"name":"solo","handler_name":"h.solo","next_node":null,"route_handler_name":null,"terminal":false},"fb":{"name":"fb","handler_name":"node:fb","next_node":"c","route_handler_name":"route:fb","terminal":false}},"event_handler_names":["go"],"metadata":{}}`
	if string(raw) != want {
		t.Fatalf("manifest JSON:\n got %s\nwant %s", raw, want)
	}
	var back GraphManifest
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if h, _ := back.ComputeHash(); h != m.GraphHash {
		t.Fatalf("decoded manifest hash %s, want %s", h, m.GraphHash)
	}
	if n, ok := back.node("fb"); !ok || n.NextNode != "c" {
		t.Fatalf("decoded Node(fb) = %+v, %v", n, ok)
	}
	// The manifest's public fragment is runsapi's (fragment_test.go there).
}

func TestGraphManifest_UnmarshalJSON_KeepsMetadataNumbers(t *testing.T) {
	t.Parallel()
	m := dataPipelineManifest()
	m.Metadata = map[string]any{"int": 1, "float": 1.0, "big": json.Number("123456789012345678901234567890"), "nested": map[string]any{"x": 2.5}}
	want, err := m.ComputeHash()
	if err != nil {
		t.Fatal(err)
	}
	m.GraphHash = want
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back GraphManifest
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.ComputeHash()
	if err != nil || got != want || back.GraphHash != want || len(back.Nodes) != 3 {
		t.Fatalf("round-tripped manifest hash %s (%v), stored %s, want %s; json %s", got, err, back.GraphHash, want, raw)
	}
}
