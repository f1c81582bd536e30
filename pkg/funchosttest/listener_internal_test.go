package funchosttest

import (
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// The listener's back-off: the minimum after a poll that found messages, then growing
// (about doubling) on empty polls up to the maximum, where it stays.
func TestPollBackoff_GrowsToMaximum(t *testing.T) {
	b := pollBackoff{min: minPollingInterval, max: 2 * time.Second}
	if d := b.next(true); d != minPollingInterval {
		t.Fatalf("after messages: %v, want %v", d, minPollingInterval)
	}
	prev := time.Duration(0)
	for i := 0; i < 20; i++ {
		d := b.next(false)
		if d < prev || d > b.max {
			t.Fatalf("empty poll %d: %v after %v, want non-decreasing and at most %v", i, d, prev, b.max)
		}
		prev = d
	}
	if prev != b.max {
		t.Errorf("after 20 empty polls: %v, want the maximum %v", prev, b.max)
	}
	if d := b.next(true); d != minPollingInterval {
		t.Errorf("after messages again: %v, want %v", d, minPollingInterval)
	}
}

// The connection setting is looked up as AzureWebJobs<name> first, then <name>;
// connection defaults to AzureWebJobsStorage.
func TestStorageConnection_LookupOrder(t *testing.T) {
	cases := []struct {
		connection string
		env        map[string]string
		want       string
		ok         bool
	}{
		{"", map[string]string{"AzureWebJobsStorage": "a"}, "a", true},
		{"Mine", map[string]string{"AzureWebJobsMine": "prefixed", "Mine": "plain"}, "prefixed", true},
		{"Mine", map[string]string{"Mine": "plain"}, "plain", true},
		{"Mine", map[string]string{"AzureWebJobsStorage": "a", "Mine": " "}, "", false},
		{"", nil, "", false},
	}
	for _, tc := range cases {
		e := &Emulator{connections: tc.env}
		got, ok := e.storageConnection(funchost.Binding{Connection: tc.connection})
		if got != tc.want || ok != tc.ok {
			t.Errorf("connection %q with %v = %q, %v; want %q, %v", tc.connection, tc.env, got, ok, tc.want, tc.ok)
		}
	}
}

// UseDevelopmentStorage=true, which azqueue cannot parse, means Azurite's default queue
// endpoint.
func TestStorageQueues_DevelopmentStorage(t *testing.T) {
	c, err := newStorageQueues().client("UseDevelopmentStorage=true", "q")
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:10001/devstoreaccount1/q"; c.URL() != want {
		t.Errorf("URL = %s, want %s", c.URL(), want)
	}
}
