package faultproxy_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

func TestStartSet_RewritesEndpoints(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	cs := "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5;" +
		"BlobEndpoint=" + up.URL + "/acct;QueueEndpoint=" + up.URL + "/acct;TableEndpoint=" + up.URL + "/acct;"
	s, err := faultproxy.StartSet(cs, &faultproxy.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := s.ConnectionString()
	for _, want := range []string{"AccountName=acct;", "AccountKey=a2V5;", "BlobEndpoint=" + s.Blob.URL() + "/acct;",
		"QueueEndpoint=" + s.Queue.URL() + "/acct;", "TableEndpoint=" + s.Table.URL() + "/acct;"} {
		if !strings.Contains(got, want) {
			t.Errorf("connection string %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, up.URL) || len(s.Proxies()) != 3 {
		t.Fatalf("connection string %q still names the upstream, or %d proxies", got, len(s.Proxies()))
	}
	s.Table.Add(faultproxy.Rule{Fault: faultproxy.Busy, Times: 1})
	if status, _, _, _ := send(t, http.MethodGet, s.Table.URL()+"/acct/t", ""); status != http.StatusServiceUnavailable {
		t.Fatalf("table proxy: %d", status)
	}
	if status, _, _, _ := send(t, http.MethodGet, s.Blob.URL()+"/acct/c/b", ""); status != http.StatusCreated {
		t.Fatalf("blob proxy: %d", status)
	}
	s.Outage(faultproxy.OutageBusy, time.Hour)
	if status, _, _, _ := send(t, http.MethodGet, s.Queue.URL()+"/acct/q/messages", ""); status != http.StatusServiceUnavailable {
		t.Fatalf("queue proxy in an outage: %d", status)
	}
	s.EndOutage()
	if st := s.Stats(); st.Requests != 3 || st.Busy != 1 || st.OutageFailures != 1 || st.Forwarded != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestStartSet_NeedsAnEndpoint(t *testing.T) {
	t.Parallel()
	if _, err := faultproxy.StartSet("UseDevelopmentStorage=true", nil); err == nil {
		t.Fatal("no endpoint accepted")
	}
	if _, err := faultproxy.StartSet("TableEndpoint=::bad", nil); err == nil {
		t.Fatal("bad endpoint accepted")
	}
}
