package hosttest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Section 10.11: the per-call timeout is functionTimeout + 1 minute, unbounded when unset.
func TestStart_CallTimeout_FunctionTimeoutPlusOneMinute(t *testing.T) {
	cases := []struct {
		host string
		want time.Duration
	}{
		{`{"functionTimeout":"00:05:00"}`, 6 * time.Minute},
		{`{"functionTimeout":"00:00:30.5"}`, 90*time.Second + 500*time.Millisecond},
		{`{}`, 0},
	}
	for _, tc := range cases {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "host.json"), []byte(tc.host), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := Start(t.Context(), Options{AppRoot: root, Handler: http.NotFoundHandler()})
		if err != nil {
			t.Fatal(err)
		}
		if e.client.Timeout != tc.want || e.forwarder.Timeout != tc.want {
			t.Errorf("%s: timeouts %v / %v, want %v", tc.host, e.client.Timeout, e.forwarder.Timeout, tc.want)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
}
