package durable

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestRouteDecision_Sleep_NormalizeAndJSON(t *testing.T) {
	t.Parallel()
	until := time.Date(2030, 5, 1, 12, 0, 0, 500, time.UTC)
	tests := []struct {
		name     string
		in       RouteDecision
		wantJSON string
		wantErr  string
	}{
		{"delay", Sleep(90*time.Second, "b").WithNote("nap"), `{"action":"sleep","next_node":"b","event_name":null,"resume_node":null,"note":"nap","delay_ms":90000}`, ""},
		{"until", SleepUntil(until, "b"), `{"action":"sleep","next_node":"b","event_name":null,"resume_node":null,"note":null,"until":"2030-05-01T12:00:00.0000005Z"}`, ""},
		{"zero", Sleep(0, "b"), `{"action":"sleep","next_node":"b","event_name":null,"resume_node":null,"note":null}`, ""},
		{"clears wait fields", RouteDecision{Action: ActionSleep, NextNode: "b", EventName: "e", ResumeNode: "r", Timeout: time.Hour, TimeoutNode: "x", Delay: time.Second},
			`{"action":"sleep","next_node":"b","event_name":null,"resume_node":null,"note":null,"delay_ms":1000}`, ""},
		{"no next", Sleep(time.Second, ""), "", "action 'sleep' requires next_node"},
		{"negative", Sleep(-time.Second, "b"), "", "sleep delay must not be negative"},
		{"too long", Sleep(MaxSleep+time.Second, "b"), "", "sleep delay must be at most 100 years"},
		{"too far", SleepUntil(time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), "b"), "", "sleep until must be before 2200-01-01"},
		{"both", RouteDecision{Action: ActionSleep, NextNode: "b", Delay: time.Second, Until: until}, "", "sleep takes a delay or an until time, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.in.normalize()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalidRouteDecision) {
					t.Fatalf("normalize() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(got)
			if err != nil || string(raw) != tt.wantJSON {
				t.Fatalf("JSON %s (%v), want %s", raw, err, tt.wantJSON)
			}
			back, err := decodeRouteDecision(raw)
			if err != nil || !reflect.DeepEqual(back, got) {
				t.Fatalf("decoded %+v (%v), want %+v", back, err, got)
			}
		})
	}
}

func TestRouteDecision_OtherActions_NoSleepKeys(t *testing.T) {
	t.Parallel()
	// A sleep's fields on another action are cleared and never written.
	d, err := RouteDecision{Action: ActionNext, NextNode: "b", Delay: time.Hour, Until: time.Now()}.normalize()
	if err != nil || d.Delay != 0 || !d.Until.IsZero() {
		t.Fatalf("normalize = %+v, %v", d, err)
	}
	raw, _ := json.Marshal(RouteDecision{Action: ActionNext, NextNode: "b", Delay: time.Hour, Until: time.Now()})
	if string(raw) != `{"action":"next","next_node":"b","event_name":null,"resume_node":null,"note":null}` {
		t.Errorf("JSON %s", raw)
	}
	// Unknown keys of another action are ignored, as before: a bad "until" fails nothing.
	if d, err := decodeRouteDecision([]byte(`{"action":"next","next_node":"b","until":"soon","delay_ms":-5}`)); err != nil || !reflect.DeepEqual(d, Next("b")) {
		t.Errorf("decode next with sleep keys = %+v, %v", d, err)
	}
}

func TestRouteDecision_Sleep_FromRouteHandlerMaps(t *testing.T) {
	t.Parallel()
	node := NodeDefinition{Name: "a"}
	tests := []struct {
		name    string
		in      any
		want    RouteDecision
		wantErr string
	}{
		{"delay_ms", map[string]any{"action": "sleep", "next_node": "b", "delay_ms": 1500}, Sleep(1500*time.Millisecond, "b"), ""},
		{"until", json.RawMessage(`{"action":"sleep","next_node":"b","until":"2030-01-02T03:04:05+01:00"}`),
			SleepUntil(time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC), "b"), ""},
		{"bad until", map[string]any{"action": "sleep", "next_node": "b", "until": "tomorrow"}, RouteDecision{}, "sleep until must be an RFC 3339 time"},
		{"negative delay", map[string]any{"action": "sleep", "next_node": "b", "delay_ms": -1}, RouteDecision{}, "sleep delay must not be negative"},
		{"huge delay", map[string]any{"action": "sleep", "next_node": "b", "delay_ms": int64(1) << 62}, RouteDecision{}, "sleep delay must be at most 100 years"},
		{"huge negative delay", map[string]any{"action": "sleep", "next_node": "b", "delay_ms": -(int64(1) << 62)}, RouteDecision{}, "sleep delay must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := normalizeRouteResult(tt.in, node)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalidRouteDecision) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !got.Until.Equal(tt.want.Until) || got.Delay != tt.want.Delay || got.NextNode != tt.want.NextNode || got.Action != ActionSleep {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestRouteDecision_WakeTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := Sleep(time.Hour, "b").WakeTime(now); !got.Equal(now.Add(time.Hour)) {
		t.Errorf("Sleep wake time %s", got)
	}
	at := now.Add(-time.Hour)
	if got := SleepUntil(at, "b").WakeTime(now); !got.Equal(at) {
		t.Errorf("SleepUntil wake time %s", got)
	}
}

func TestResolveRoute_Sleep_TargetChecked(t *testing.T) {
	t.Parallel()
	b := NewManifestBuilder[testState]("g")
	b.SetEntrypoint("a")
	_ = b.AddNode("a", nodeA, WithRoute(RouteFunc[testState](func(_ context.Context, s testState) (any, error) {
		return Sleep(time.Hour, s.Name), nil
	})))
	_ = b.AddNode("b", nodeA, Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if d, err := g.ResolveRoute(t.Context(), "a", json.RawMessage(`{"name":"b"}`)); err != nil || d.Action != ActionSleep || d.NextNode != "b" || d.Delay != time.Hour {
		t.Fatalf("ResolveRoute = %+v, %v", d, err)
	}
	_, err = g.ResolveRoute(t.Context(), "a", json.RawMessage(`{"name":"zz"}`))
	if err == nil || err.Error() != "route decision references unknown node 'zz' in graph 'g'" || !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("ResolveRoute to an unknown node = %v", err)
	}
}
