package durable

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestRouteDecision_normalize_ValidatesAndClears(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      RouteDecision
		want    RouteDecision
		wantErr string
	}{
		{"next ok", RouteDecision{Action: ActionNext, NextNode: "a", EventName: "e", ResumeNode: "r", Note: "n"}, RouteDecision{Action: ActionNext, NextNode: "a", Note: "n"}, ""},
		{"next missing node", RouteDecision{Action: ActionNext}, RouteDecision{}, "action 'next' requires next_node"},
		{"wait ok", RouteDecision{Action: ActionWaitForEvent, NextNode: "x", EventName: "e", ResumeNode: "r", Note: "n"}, RouteDecision{Action: ActionWaitForEvent, EventName: "e", ResumeNode: "r", Note: "n"}, ""},
		{"wait missing event", RouteDecision{Action: ActionWaitForEvent, ResumeNode: "r"}, RouteDecision{}, "action 'wait_for_event' requires both event_name and resume_node"},
		{"wait missing resume", RouteDecision{Action: ActionWaitForEvent, EventName: "e"}, RouteDecision{}, "action 'wait_for_event' requires both event_name and resume_node"},
		{"complete ok", RouteDecision{Action: ActionComplete, EventName: "e", ResumeNode: "r", Note: "done"}, RouteDecision{Action: ActionComplete, Note: "done"}, ""},
		{"complete with next", RouteDecision{Action: ActionComplete, NextNode: "a"}, RouteDecision{}, "action 'complete' must not set next_node"},
		{"missing action", RouteDecision{NextNode: "a"}, RouteDecision{}, "route decision requires action"},
		{"bad action", RouteDecision{Action: "jump"}, RouteDecision{}, "invalid route action 'jump': expected 'next', 'complete' or 'wait_for_event'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.in.normalize()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalidRouteDecision) {
					t.Fatalf("normalize() error = %v, want %q wrapping ErrInvalidRouteDecision", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("normalize() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestRouteDecision_Constructors_BuildValidDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  RouteDecision
		want RouteDecision
	}{
		{"next", Next("a"), RouteDecision{Action: "next", NextNode: "a"}},
		{"complete no note", Complete(""), RouteDecision{Action: "complete"}},
		{"complete note", Complete("bye"), RouteDecision{Action: "complete", Note: "bye"}},
		{"wait", WaitForEvent("approval", "draft").WithNote("awaiting"), RouteDecision{Action: "wait_for_event", EventName: "approval", ResumeNode: "draft", Note: "awaiting"}},
	}
	for _, tt := range tests {
		if _, err := tt.got.normalize(); !reflect.DeepEqual(tt.got, tt.want) || err != nil {
			t.Errorf("%s: got %+v (normalize: %v), want %+v", tt.name, tt.got, err, tt.want)
		}
	}
}

func TestRouteDecision_MarshalJSON_AlwaysFiveKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   RouteDecision
		want string
	}{
		{WaitForEvent("approval", "draft_reply").WithNote("awaiting human approval"), `{"action":"wait_for_event","next_node":null,"event_name":"approval","resume_node":"draft_reply","note":"awaiting human approval"}`},
		{Next("b"), `{"action":"next","next_node":"b","event_name":null,"resume_node":null,"note":null}`},
		{Complete(""), `{"action":"complete","next_node":null,"event_name":null,"resume_node":null,"note":null}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
		var back RouteDecision
		if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back, tt.in) {
			t.Errorf("round trip of %s = %+v, %v", got, back, err)
		}
	}
}

func TestRouteDecision_UnmarshalJSON_ValidatesAndNormalises(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    RouteDecision
		wantErr string
	}{
		{"next drops event", `{"action":"next","next_node":"a","event_name":"e"}`, Next("a"), ""},
		{"complete only action", `{"action":"complete"}`, Complete(""), ""},
		{"complete null next", `{"action":"complete","next_node":null,"note":"n"}`, Complete("n"), ""},
		{"complete empty next", `{"action":"complete","next_node":""}`, Complete(""), ""},
		{"wait drops next", `{"action":"wait_for_event","next_node":"x","event_name":"e","resume_node":"r"}`, WaitForEvent("e", "r"), ""},
		{"complete with next", `{"action":"complete","next_node":"a"}`, RouteDecision{}, "action 'complete' must not set next_node"},
		{"next empty", `{"action":"next","next_node":""}`, RouteDecision{}, "action 'next' requires next_node"},
		{"no action", `{"next_node":"a"}`, RouteDecision{}, "route decision requires action"},
		{"null action", `{"action":null}`, RouteDecision{}, "route decision requires action"},
		{"bad action", `{"action":"NEXT","next_node":"a"}`, RouteDecision{}, "invalid route action 'NEXT': expected 'next', 'complete' or 'wait_for_event'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got RouteDecision
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Unmarshal(%s) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Unmarshal(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRouteDecision_UnmarshalJSON_WrongTypes_Error(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`[]`, `"next"`, `{"action":1}`, `{"action":"next","next_node":2}`} {
		var d RouteDecision
		if err := json.Unmarshal([]byte(in), &d); !errors.Is(err, ErrInvalidRouteDecision) {
			t.Errorf("Unmarshal(%s) error = %v, want ErrInvalidRouteDecision", in, err)
		}
	}
}

func TestNormalizeRouteResult_Shorthands(t *testing.T) {
	t.Parallel()
	withNext := NodeDefinition{Name: "n", NextNode: "fallback", RouteHandlerName: "r"}
	noNext := NodeDefinition{Name: "n", RouteHandlerName: "r"}
	tests := []struct {
		name    string
		node    NodeDefinition
		result  any
		want    RouteDecision
		wantErr string
	}{
		{"nil with static next", withNext, nil, Next("fallback"), ""},
		{"nil without next", noNext, nil, Complete("route handler returned None"), ""},
		{"nil pointer", withNext, (*RouteDecision)(nil), Next("fallback"), ""},
		{"raw null", noNext, json.RawMessage("null"), Complete("route handler returned None"), ""},
		{"decision as is", noNext, Complete("x"), Complete("x"), ""},
		{"decision pointer", noNext, &RouteDecision{Action: ActionNext, NextNode: "a"}, Next("a"), ""},
		{"decision invalid", noNext, RouteDecision{Action: ActionNext}, RouteDecision{}, "action 'next' requires next_node"},
		{"complete string", withNext, "__complete__", Complete(""), ""},
		{"other string", noNext, "somewhere", Next("somewhere"), ""},
		{"empty string", noNext, "", RouteDecision{}, "action 'next' requires next_node"},
		{"map", noNext, map[string]any{"action": "wait_for_event", "event_name": "e", "resume_node": "r"}, WaitForEvent("e", "r"), ""},
		{"map invalid", noNext, map[string]any{"action": "complete", "next_node": "a"}, RouteDecision{}, "action 'complete' must not set next_node"},
		{"raw object", noNext, json.RawMessage(`{"action":"next","next_node":"b"}`), Next("b"), ""},
		{"raw string", noNext, json.RawMessage(`"__complete__"`), Complete(""), ""},
		{"int", noNext, 3, RouteDecision{}, "unsupported route decision: int"},
		{"slice", noNext, []string{"a"}, RouteDecision{}, "unsupported route decision: []string"},
		{"raw number", noNext, json.RawMessage(`3`), RouteDecision{}, "unsupported route decision: float64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := normalizeRouteResult(tt.result, tt.node)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("normalizeRouteResult(%#v) error = %v, want %q", tt.result, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("normalizeRouteResult(%#v) = %+v, %v; want %+v", tt.result, got, err, tt.want)
			}
		})
	}
}
