package funchost

import (
	"strings"
	"testing"
)

func TestRouteTemplate_Match(t *testing.T) {
	type want map[string]any // string value, or nil for an unmatched optional
	tests := []struct {
		route, path string
		ok          bool
		values      want
	}{
		{"graphs/echo/invoke", "graphs/echo/invoke", true, want{}},
		{"graphs/echo/invoke", "GRAPHS/Echo/INVOKE", true, want{}},
		{"graphs/echo/invoke", "/graphs/echo/invoke/", true, want{}},
		{"graphs/echo/invoke", "graphs/echo", false, nil},
		{"graphs/echo/invoke", "graphs/echo/invoke/x", false, nil},
		{"runs/{instance_id}", "runs/abc", true, want{"instance_id": "abc"}},
		{"runs/{instance_id}", "runs/a%20b", true, want{"instance_id": "a b"}},
		{"runs/{instance_id}", "runs", false, nil},
		{"runs/{id?}", "runs", true, want{"id": nil}},
		{"runs/{id?}", "runs/7", true, want{"id": "7"}},
		{"runs/{id=latest}", "runs", true, want{"id": "latest"}},
		{"files/{*rest}", "files/a/b/c", true, want{"rest": "a/b/c"}},
		{"files/{*rest}", "files", true, want{"rest": ""}},
		{"items/{id:int}", "items/42", true, want{"id": "42"}},
		{"items/{id:int}", "items/x", false, nil},
		{"items/{id:int}", "items/99999999999", false, nil},
		{"items/{id:long}", "items/99999999999", true, want{"id": "99999999999"}},
		{"items/{id:guid}", "items/0f8fad5b-d9cb-469f-a165-70867728950e", true, want{"id": "0f8fad5b-d9cb-469f-a165-70867728950e"}},
		{"items/{id:guid}", "items/nope", false, nil},
		{"items/{b:bool}", "items/TRUE", true, want{"b": "TRUE"}},
		{"items/{b:bool}", "items/yes", false, nil},
		{"items/{n:alpha}", "items/abcXYZ", true, want{"n": "abcXYZ"}},
		{"items/{n:alpha}", "items/ab1", false, nil},
		{"items/{n:minlength(3)}", "items/ab", false, nil},
		{"items/{n:maxlength(3)}", "items/abcd", false, nil},
		{"items/{n:length(2)}", "items/ab", true, want{"n": "ab"}},
		{"items/{n:length(2,3)}", "items/abcd", false, nil},
		{"items/{n:range(1,5)}", "items/5", true, want{"n": "5"}},
		{"items/{n:range(1,5)}", "items/6", false, nil},
		{"items/{n:min(10)}", "items/9", false, nil},
		{"items/{n:max(10)}", "items/10", true, want{"n": "10"}},
		{"items/{n:int:min(1)}", "items/0", false, nil},
		{"items/{d:double}", "items/1.5", true, want{"d": "1.5"}},
		{"items/{d:datetime}", "items/2026-11-22", true, want{"d": "2026-11-22"}},
		{"items/{s:regex(^[a-z]+-\\d+$)}", "items/ABC-12", true, want{"s": "ABC-12"}},
		{"items/{s:regex(^[a-z]+-\\d+$)}", "items/abc", false, nil},
		{"items/{id:int?}", "items", true, want{"id": nil}},
		{"", "", true, want{}},
	}
	for _, tc := range tests {
		t.Run(tc.route+"|"+tc.path, func(t *testing.T) {
			tmpl, err := ParseRouteTemplate(tc.route)
			if err != nil {
				t.Fatalf("ParseRouteTemplate: %v", err)
			}
			values, ok := tmpl.Match(tc.path)
			if ok != tc.ok {
				t.Fatalf("Match ok = %v, want %v", ok, tc.ok)
			}
			for k, w := range tc.values {
				got, present := values[k]
				if !present {
					t.Fatalf("value %q missing", k)
				}
				if w == nil {
					if got != nil {
						t.Errorf("%q = %q, want nil", k, *got)
					}
					continue
				}
				if got == nil || *got != w.(string) {
					t.Errorf("%q = %v, want %q", k, got, w)
				}
			}
		})
	}
}

func TestParseRouteTemplate_Refusals(t *testing.T) {
	tests := map[string]string{
		"a/{x}.{y}":      "complex segment",
		"a/{*rest}/b":    "catch-all",
		"a/{x?}/b":       "followed by a required segment",
		"a/{x}/{x}":      "appears twice",
		"a/{x:unknown}":  "unknown route constraint",
		"a/{x:min(a)}":   "not an integer",
		"a//b":           "empty segment",
		"a/{}":           "no name",
		"a/{x:regex(()}": "regex",
	}
	for route, msg := range tests {
		_, err := ParseRouteTemplate(route)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRouteTemplate(%q) error = %v, want it to mention %q", route, err, msg)
		}
	}
}

func TestIsReservedRoute(t *testing.T) {
	for route, want := range map[string]bool{
		"admin": true, "/Admin/x": true, "administrators/x": true, "runtime/webhooks": true, " RUNTIMEX": true,
		"graphs/admin": false, "health": false, "": false,
	} {
		if got := IsReservedRoute(route); got != want {
			t.Errorf("IsReservedRoute(%q) = %v, want %v", route, got, want)
		}
	}
}
