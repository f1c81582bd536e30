package faultproxy_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// A proxy in front of a service loses the reply of the first table batch: the service
// applies it, the client gets no answer.
func ExampleNew() {
	var applied atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { applied.Add(1) }))
	defer svc.Close()

	p, err := faultproxy.New(svc.URL, &faultproxy.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	lost := p.Add(faultproxy.Rule{Name: "first batch", Match: faultproxy.TableBatch(), Fault: faultproxy.LoseReply, Times: 1})

	_, err = http.Post(p.URL()+"/devstoreaccount1/$batch", "multipart/mixed", strings.NewReader("…"))
	fmt.Println("client error:", err != nil, "applied:", applied.Load(), "fired:", lost.Fired())
	resp, err := http.Post(p.URL()+"/devstoreaccount1/$batch", "multipart/mixed", strings.NewReader("…"))
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println("retry:", resp.StatusCode, "applied:", applied.Load())
	}
	// Output:
	// client error: true applied: 1 fired: 1
	// retry: 200 applied: 2
}

// A set of proxies in front of every endpoint of a connection string; the tests hand the
// rewritten connection string to the code under test.
func ExampleStartSet() {
	svc := httptest.NewServer(http.NotFoundHandler())
	defer svc.Close()
	cs := "AccountName=acct;AccountKey=a2V5;TableEndpoint=" + svc.URL + "/acct;QueueEndpoint=" + svc.URL + "/acct;"
	s, err := faultproxy.StartSet(cs, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	s.Queue.Add(faultproxy.Rule{Match: faultproxy.QueueEnqueue(), Fault: faultproxy.Busy, Times: 3})
	fmt.Println(strings.Contains(s.ConnectionString(), s.Table.URL()+"/acct"), s.Blob == nil)
	// Output: true true
}
