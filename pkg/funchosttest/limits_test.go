package funchosttest_test

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// The URL and body limits (the 230 s cut-off is documented, not emulated).
func TestEmulator_Limits_URLAndBody(t *testing.T) {
	root := writeApp(t, "", map[string]string{"fn": httpFunc("anonymous", "fn")})
	e := start(t, root, &recorder{}, funchosttest.Options{Env: map[string]string{"FUNCTIONS_REQUEST_BODY_SIZE_LIMIT": "10"}})
	cases := []struct {
		name   string
		path   string
		body   string
		status int
	}{
		{"long URL", "/api/fn?pad=" + strings.Repeat("x", 4100), "", 414},
		{"body at limit", "/api/fn", strings.Repeat("b", 10), 200},
		{"body over limit", "/api/fn", strings.Repeat("b", 11), 413},
	}
	for _, tc := range cases {
		status, _, _ := do(t, "POST", e.URL()+tc.path, strings.NewReader(tc.body), nil)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, status, tc.status)
		}
	}
}
