package faultproxy_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

func TestMatchers_KindsOfWrite(t *testing.T) {
	t.Parallel()
	matchers := map[string]faultproxy.Matcher{
		"TableBatch": faultproxy.TableBatch(), "TableEntityWrite": faultproxy.TableEntityWrite(),
		"QueueEnqueue": faultproxy.QueueEnqueue(), "QueueDelete": faultproxy.QueueDelete(),
		"QueueUpdate": faultproxy.QueueUpdate(), "QueueReceive": faultproxy.QueueReceive(),
		"BlobPut": faultproxy.BlobPut(), "BlobDelete": faultproxy.BlobDelete(),
	}
	// Each proxy fronts one service, so only that service's matchers are asked (a queue
	// message's path has the shape of a blob's).
	tests := []struct {
		service, method, uri string
		want                 string // the one matcher of the service that matches, "" for none
	}{
		{"Table", "POST", "/acct/$batch", "TableBatch"},
		{"Table", "POST", "/acct/runs", "TableEntityWrite"},
		{"Table", "PUT", "/acct/runs(PartitionKey='a',RowKey='r')", "TableEntityWrite"},
		{"Table", "MERGE", "/acct/runs(PartitionKey='a',RowKey='r')", "TableEntityWrite"},
		{"Table", "DELETE", "/acct/runs(PartitionKey='a',RowKey='r')", "TableEntityWrite"},
		{"Table", "GET", "/acct/runs(PartitionKey='a',RowKey='r')", ""},
		{"Table", "POST", "/acct/Tables", "TableEntityWrite"}, // creating a table is a POST like an insert
		{"Queue", "POST", "/acct/work/messages", "QueueEnqueue"},
		{"Queue", "GET", "/acct/work/messages?numofmessages=1", "QueueReceive"},
		{"Queue", "DELETE", "/acct/work/messages/0f1e?popreceipt=x", "QueueDelete"},
		{"Queue", "PUT", "/acct/work/messages/0f1e?popreceipt=x&visibilitytimeout=30", "QueueUpdate"},
		{"Blob", "PUT", "/acct/payloads/run/nonce/e-1.json", "BlobPut"},
		{"Blob", "PUT", "/acct/payloads/run/nonce/e-1.json?comp=block&blockid=AA", "BlobPut"},
		{"Blob", "DELETE", "/acct/payloads/run/nonce/e-1.json", "BlobDelete"},
		{"Blob", "PUT", "/acct/payloads?restype=container", ""},
		{"Blob", "GET", "/acct/payloads?restype=container&comp=list", ""},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.uri)
		if err != nil {
			t.Fatal(err)
		}
		req := &faultproxy.Request{Method: tt.method, Path: u.EscapedPath(), Query: u.Query()}
		for name, m := range matchers {
			if !strings.HasPrefix(name, tt.service) {
				continue
			}
			if got := m(req); got != (name == tt.want) {
				t.Errorf("%s(%s %s) = %v", name, tt.method, tt.uri, got)
			}
		}
	}
}

func TestMatchers_Combinators(t *testing.T) {
	t.Parallel()
	req := &faultproxy.Request{Method: "POST", Path: "/acct/$batch", Body: []byte(`{"Type":"run_started"}`)}
	if !faultproxy.All(faultproxy.TableBatch(), faultproxy.BodyContains("run_started"))(req) {
		t.Error("All(batch, body) did not match")
	}
	if faultproxy.All(faultproxy.TableBatch(), faultproxy.BodyContains("run_terminated"))(req) {
		t.Error("All matched a batch without the body")
	}
	if !faultproxy.AnyOf(faultproxy.QueueEnqueue(), faultproxy.Methods("post"))(req) {
		t.Error("AnyOf(…, Methods(post)) did not match a POST")
	}
	if !faultproxy.All()(req) || faultproxy.AnyOf()(req) {
		t.Error("empty All must match and empty AnyOf must not")
	}
}

func TestMatchers_BlobLease_ByAction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, uri, action string
		actions             []string
		want                bool
	}{
		{"PUT", "/acct/locks/g/t?comp=lease", "acquire", nil, true},
		{"PUT", "/acct/locks/g/t?comp=lease", "renew", []string{"renew"}, true},
		{"PUT", "/acct/locks/g/t?comp=lease", "Release", []string{"acquire", "release"}, true},
		{"PUT", "/acct/locks/g/t?comp=lease", "renew", []string{"acquire"}, false},
		{"PUT", "/acct/locks/g/t?comp=lease", "", nil, false},                      // no action: not a lease call
		{"PUT", "/acct/locks/g/t", "acquire", nil, false},                          // an upload
		{"GET", "/acct/locks/g/t?comp=lease", "acquire", nil, false},               // not a PUT
		{"PUT", "/acct/locks?restype=container&comp=lease", "acquire", nil, false}, // a container lease
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.uri)
		if err != nil {
			t.Fatal(err)
		}
		req := &faultproxy.Request{Method: tt.method, Path: u.EscapedPath(), Query: u.Query(), Header: http.Header{}}
		if tt.action != "" {
			req.Header.Set("x-ms-lease-action", tt.action)
		}
		if got := faultproxy.BlobLease(tt.actions...)(req); got != tt.want {
			t.Errorf("BlobLease(%q)(%s %s, action %q) = %v, want %v", tt.actions, tt.method, tt.uri, tt.action, got, tt.want)
		}
	}
}
