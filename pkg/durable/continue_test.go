package durable

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestContinueAsNew_normalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        RouteDecision
		wantInput string
		wantErr   string
	}{
		{"object", ContinueAsNew(json.RawMessage(` {"turn":0} `)), `{"turn":0}`, ""},
		{"nil is {}", ContinueAsNew(nil), `{}`, ""},
		{"null is {}", ContinueAsNew(json.RawMessage(`null`)), `{}`, ""},
		{"a struct", ContinueAsNew(struct {
			Turn int `json:"turn"`
		}{3}), `{"turn":3}`, ""},
		{"a list", ContinueAsNew([]int{1}), "", "continue_as_new input must be a JSON object"},
		{"not JSON", ContinueAsNew(json.RawMessage(`{`)), "", "continue_as_new input must be a JSON object"},
		{"unencodable", ContinueAsNew(map[string]any{"f": func() {}}), "", "encode continue_as_new input: json: unsupported type: func()"},
		{"other members cleared", RouteDecision{Action: ActionContinueAsNew, NextNode: "a", EventName: "e", ResumeNode: "r", Input: json.RawMessage(`{}`)}, `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.in.normalize()
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidRouteDecision) || !strings.HasSuffix(err.Error(), tt.wantErr) {
					t.Fatalf("normalize() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got.Input) != tt.wantInput || got.NextNode != "" || got.EventName != "" || got.ResumeNode != "" {
				t.Fatalf("normalize() = %+v (input %s), %v; want input %s", got, got.Input, err, tt.wantInput)
			}
		})
	}
	// Another action drops an input.
	if d, err := (RouteDecision{Action: ActionNext, NextNode: "a", Input: json.RawMessage(`{}`)}).normalize(); err != nil || d.Input != nil {
		t.Fatalf("next keeps input %s, %v", d.Input, err)
	}
}

func TestContinueAsNew_JSONForm_RoundTrips(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(ContinueAsNew(json.RawMessage(`{"turn":0}`)).WithNote("monthly"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"action":"continue_as_new","next_node":null,"event_name":null,"resume_node":null,"note":"monthly","input":{"turn":0}}`
	if string(raw) != want {
		t.Fatalf("Marshal = %s\nwant      %s", raw, want)
	}
	var d RouteDecision
	if err := json.Unmarshal(raw, &d); err != nil || d.Action != ActionContinueAsNew || string(d.Input) != `{"turn":0}` || d.Note != "monthly" {
		t.Fatalf("Unmarshal = %+v, %v", d, err)
	}
	// The map form of a route handler.
	got, err := normalizeRouteResult(map[string]any{"action": "continue_as_new", "input": map[string]any{"turn": 1}}, NodeDefinition{Name: "n"})
	if err != nil || got.Action != ActionContinueAsNew || string(got.Input) != `{"turn":1}` {
		t.Fatalf("map form = %+v, %v", got, err)
	}
	// Other actions write no input.
	if raw, _ := json.Marshal(Next("a")); strings.Contains(string(raw), "input") {
		t.Fatalf("next writes %s", raw)
	}
}

// A typed route's ContinueAsNew(S{...}) is encoded as the state model encodes a start's typed
// input: nil slices as empty lists, which the model accepts where null is refused.
func TestContinueAsNew_TypedInput_EncodedAsTheStateModel(t *testing.T) {
	t.Parallel()
	type agent struct {
		Notes []string `json:"notes"`
		Turn  int      `json:"turn"`
	}
	b := NewManifestBuilder[agent]("loop")
	b.SetEntrypoint("think")
	if err := b.AddStep("think", func(_ context.Context, a agent) (agent, error) { return a, nil },
		WithDecide(func(_ context.Context, a agent) (RouteDecision, error) {
			return ContinueAsNew(agent{Turn: a.Turn + 1}), nil
		})); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := g.ResolveRoute(t.Context(), "think", json.RawMessage(`{"notes":["a"],"turn":1}`))
	if err != nil || string(d.Input) != `{"notes":[],"turn":2}` {
		t.Fatalf("ResolveRoute = input %s, %v; want the model's encoding", d.Input, err)
	}
	if err := g.r.CheckState(d.Input); err != nil {
		t.Fatalf("the model refuses the input it encoded: %v", err)
	}
}
