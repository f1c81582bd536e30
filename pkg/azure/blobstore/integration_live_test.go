//go:build integration

package blobstore_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// liveAppends is the append limit the Azurite tests give their stores: the suite reaches it
// in 20 calls, not 50 000; the seal that enforces it is the one that enforces the default.
const liveAppends = 20

func TestIntegrationLive_Conformance(t *testing.T) {
	t.Parallel()
	l := blobstore.NewLive(newContainer(t), &blobstore.LiveOptions{MaxAppends: liveAppends})
	enginetest.RunLiveStoreTests(t, func(*testing.T) engine.LiveStore { return l },
		enginetest.LiveSuiteOptions{MaxAppends: liveAppends})
}

// proxiedLive is a live store on a container of the test's own, reached through a faultproxy
// whose every request is counted by kind. The SDK keeps its retries (three) with millisecond
// delays.
type proxiedLive struct {
	live  *blobstore.Live
	proxy *faultproxy.Proxy
	// creates, appends, seals, heads and gets count the requests that reached the proxy.
	creates, appends, seals, heads, gets atomic.Int64
}

func newProxiedLive(t *testing.T, maxAppends int) *proxiedLive {
	t.Helper()
	direct := newContainer(t)
	set, err := faultproxy.StartSet(azuritetest.ConnectionString(t), &faultproxy.Options{Seed: 41, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	name, err := containerName(direct)
	if err != nil {
		t.Fatal(err)
	}
	via, err := container.NewClientFromConnectionString(set.ConnectionString(), name, &container.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &proxiedLive{live: blobstore.NewLive(via, &blobstore.LiveOptions{MaxAppends: maxAppends}), proxy: set.Blob}
	p.proxy.Add(faultproxy.Rule{Name: "count", Match: func(r *faultproxy.Request) bool {
		switch {
		case r.Method == http.MethodPut && r.Query.Get("comp") == "appendblock":
			p.appends.Add(1)
		case r.Method == http.MethodPut && r.Query.Get("comp") == "seal":
			p.seals.Add(1)
		case r.Method == http.MethodPut && r.Query.Get("comp") == "":
			p.creates.Add(1)
		case r.Method == http.MethodHead:
			p.heads.Add(1)
		case r.Method == http.MethodGet:
			p.gets.Add(1)
		}
		return false // counts, never fires
	}})
	return p
}

// requests returns the counts so far as creates, appends, seals, heads, gets, and resets them.
func (p *proxiedLive) requests() [5]int64 {
	return [5]int64{p.creates.Swap(0), p.appends.Swap(0), p.seals.Swap(0), p.heads.Swap(0), p.gets.Swap(0)}
}

// appendRequest matches Append Block.
func appendRequest(r *faultproxy.Request) bool {
	return r.Method == http.MethodPut && r.Query.Get("comp") == "appendblock"
}

// What each operation costs in requests: the figures docs/storage.md states.
func TestIntegrationLive_RequestsPerOperation(t *testing.T) {
	t.Parallel()
	p := newProxiedLive(t, 0)
	ctx := t.Context()
	key := enginetest.UniqueKey("run") + "/1/live"
	type counts = [5]int64 // creates, appends, seals, heads, gets
	steps := []struct {
		name string
		do   func() error
		want counts
	}{
		{"first append", func() error { _, err := p.live.Append(ctx, key, 0, []byte("hello")); return err }, counts{1, 1, 0, 0, 0}},
		{"next append", func() error { _, err := p.live.Append(ctx, key, 5, []byte(" world")); return err }, counts{0, 1, 0, 0, 0}},
		{"length", func() error { _, err := p.live.Length(ctx, key); return err }, counts{0, 0, 0, 1, 0}},
		{"read", func() error {
			data, n, err := p.live.Read(ctx, key, 6, 100)
			if err == nil && (string(data) != "world" || n != 11) {
				t.Errorf("Read(6) = %q, %d", data, n)
			}
			return err
		}, counts{0, 0, 0, 0, 1}},
		{"read at the end", func() error {
			data, n, err := p.live.Read(ctx, key, 11, 100)
			if err == nil && (len(data) != 0 || n != 11) {
				t.Errorf("Read(11) = %q, %d", data, n)
			}
			return err
		}, counts{0, 0, 0, 0, 1}}, // Azurite: 206 and no byte; Azure: 416 with the length
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := p.requests(); got != s.want {
			t.Errorf("%s: requests (create, append, seal, head, get) = %v, want %v", s.name, got, s.want)
		}
	}
}

// An append whose reply is lost after it landed is retried by the SDK, which meets the log
// grown by its own first try: ErrConflict, as the contract says, and reading from the offset
// shows the caller its own bytes, there once.
func TestIntegrationLive_LostReply_RetryConflicts_ReadTells(t *testing.T) {
	t.Parallel()
	p := newProxiedLive(t, 0)
	ctx := t.Context()
	key := enginetest.UniqueKey("run") + "/1/live"
	at, err := p.live.Append(ctx, key, 0, []byte("a|"))
	if err != nil {
		t.Fatal(err)
	}
	lost := p.proxy.Add(faultproxy.Rule{Name: "lose the append's reply", Match: appendRequest, Fault: faultproxy.LoseReply, Times: 1})
	record := []byte("writer-1:seq-2|")
	_, err = p.live.Append(ctx, key, at, record)
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("append whose reply was lost: err = %v, want ErrConflict (the retry met the first try)", err)
	}
	if lost.Fired() != 1 {
		t.Fatalf("the rule fired %d times, want 1", lost.Fired())
	}
	data, n, err := p.live.Read(ctx, key, at, len(record))
	if err != nil || string(data) != string(record) || n != at+int64(len(record)) {
		t.Fatalf("Read from %d = %q, %d, %v; want the record, there once", at, data, n, err)
	}
}

// A log whose creation landed but whose first append did not exists with length 0: Length
// and Read say so (Azure answers 416 to a range of an empty blob), and the next append at 0
// writes it.
func TestIntegrationLive_CreatedNotAppended_EmptyLog(t *testing.T) {
	t.Parallel()
	p := newProxiedLive(t, 0)
	ctx := t.Context()
	key := enginetest.UniqueKey("run") + "/1/live"
	dropped := p.proxy.Add(faultproxy.Rule{Name: "drop every try of the append", Match: appendRequest, Fault: faultproxy.Drop, Times: 4})
	if _, err := p.live.Append(ctx, key, 0, []byte("lost")); err == nil || errors.Is(err, engine.ErrConflict) {
		t.Fatalf("append whose every try was dropped: err = %v, want an unknown outcome", err)
	}
	if dropped.Fired() != 4 {
		t.Fatalf("the rule dropped %d tries, want 4 (the SDK's first and three retries)", dropped.Fired())
	}
	if n, err := p.live.Length(ctx, key); err != nil || n != 0 {
		t.Fatalf("Length = %d, %v; want 0", n, err)
	}
	p.requests()
	if data, n, err := p.live.Read(ctx, key, 0, 10); err != nil || len(data) != 0 || n != 0 {
		t.Fatalf("Read(0) = %q, %d, %v; want nothing of a log of 0", data, n, err)
	}
	if got := p.requests(); got != [5]int64{0, 0, 0, 0, 1} {
		t.Errorf("Read(0) of an empty log: requests (create, append, seal, head, get) = %v, want one GET (its 416 carries the length)", got)
	}
	if _, _, err := p.live.Read(ctx, key, 1, 10); !errors.Is(err, engine.ErrInvalidQuery) {
		t.Fatalf("Read(1) of an empty log: err = %v, want ErrInvalidQuery", err)
	}
	if at, err := p.live.Append(ctx, key, 0, []byte("first")); err != nil || at != 5 {
		t.Fatalf("append at 0 of the empty log = %d, %v", at, err)
	}
}

// The append that fills a log seals it; when that seal is lost, the next append that lands
// seals it again, so a log holds at most one append past the limit, and every append after
// the seal is refused as too large.
func TestIntegrationLive_SealLost_NextAppendSeals(t *testing.T) {
	t.Parallel()
	const limit = 3
	p := newProxiedLive(t, limit)
	ctx := t.Context()
	key := enginetest.UniqueKey("run") + "/1/live"
	p.proxy.Add(faultproxy.Rule{Name: "drop the first seal", Match: func(r *faultproxy.Request) bool {
		return r.Method == http.MethodPut && r.Query.Get("comp") == "seal"
	}, Fault: faultproxy.Drop, Times: 4})
	var at int64
	for i := range limit + 1 {
		n, err := p.live.Append(ctx, key, at, []byte{'a' + byte(i)})
		if err != nil {
			t.Fatalf("append %d: %v", i+1, err)
		}
		at = n
	}
	var le *engine.LimitError
	if _, err := p.live.Append(ctx, key, at, []byte("!")); !errors.As(err, &le) || le.Limit != "live appends" {
		t.Fatalf("append past the sealed log: err = %v, want a live appends *LimitError", err)
	}
	if got := p.requests(); got[2] != 4+1 {
		t.Fatalf("%d seal requests, want 5 (four dropped tries, then the seal after the next append)", got[2])
	}
}

// containerName returns the name of c's container (the last segment of its URL).
func containerName(c *container.Client) (string, error) {
	u := c.URL()
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] == '/' {
			return u[i+1:], nil
		}
	}
	return "", errors.New("container URL without a path")
}
