package faultproxy_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/faultproxy"
)

// upstream is a tiny service: every request is applied (recorded) and answered with its
// method and path.
type upstream struct {
	*httptest.Server
	mu      sync.Mutex
	applied []string
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.applied = append(u.applied, r.Method+" "+r.URL.RequestURI()+" "+string(body))
		u.mu.Unlock()
		w.Header().Set("x-upstream", "yes")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "applied "+r.Method+" "+r.URL.Path)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.applied)
}

func (u *upstream) at(i int) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.applied[i]
}

func newProxy(t *testing.T, up *upstream, seed uint64) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(up.URL, &faultproxy.Options{Seed: seed, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// send makes one request on a fresh connection and returns the status and body, or the
// transport error.
func send(t *testing.T, method, url, body string) (int, string, http.Header, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, nil
}

func TestProxy_Forwards(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := newProxy(t, up, 1)
	status, body, hdr, err := send(t, http.MethodPut, p.URL()+"/acct/c/blob%20x?comp=block", "data")
	if err != nil || status != http.StatusCreated || body != "applied PUT /acct/c/blob x" || hdr.Get("x-upstream") != "yes" {
		t.Fatalf("forwarded: %d %q %v %v", status, body, hdr, err)
	}
	if got := up.at(0); got != "PUT /acct/c/blob%20x?comp=block data" {
		t.Fatalf("upstream saw %q", got)
	}
	if st := p.Stats(); st.Requests != 1 || st.Forwarded != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestProxy_LoseReply_AppliesThenHangsUp(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := newProxy(t, up, 1)
	rule := p.Add(faultproxy.Rule{Name: "batch", Match: faultproxy.TableBatch(), Fault: faultproxy.LoseReply, Times: 1})
	if _, _, _, err := send(t, http.MethodPost, p.URL()+"/acct/$batch", "ops"); err == nil {
		t.Fatal("the client got an answer")
	}
	if up.count() != 1 {
		t.Fatalf("upstream applied %d requests, want the lost one", up.count())
	}
	// Times: 1 — the client's retry goes through (and is applied a second time).
	if status, _, _, err := send(t, http.MethodPost, p.URL()+"/acct/$batch", "ops"); err != nil || status != http.StatusCreated {
		t.Fatalf("retry: %d %v", status, err)
	}
	if rule.Fired() != 1 || up.count() != 2 || p.Stats().LostReplies != 1 {
		t.Fatalf("fired %d, applied %d, stats %+v", rule.Fired(), up.count(), p.Stats())
	}
}

func TestProxy_Busy_BurstNotForwarded(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := newProxy(t, up, 1)
	p.Add(faultproxy.Rule{Match: faultproxy.QueueEnqueue(), Fault: faultproxy.Busy, Times: 2})
	for i, accept := range []string{"application/json", "application/xml"} {
		req, _ := http.NewRequest(http.MethodPost, p.URL()+"/acct/q/messages", strings.NewReader("m"))
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("x-ms-error-code") != "ServerBusy" || !strings.Contains(string(b), "ServerBusy") {
			t.Fatalf("burst %d: %d %v %s", i, resp.StatusCode, resp.Header, b)
		}
	}
	if status, _, _, err := send(t, http.MethodPost, p.URL()+"/acct/q/messages", "m"); err != nil || status != http.StatusCreated {
		t.Fatalf("after the burst: %d %v", status, err)
	}
	if up.count() != 1 || p.Stats().Busy != 2 {
		t.Fatalf("applied %d, stats %+v", up.count(), p.Stats())
	}
}

func TestProxy_Drop_NothingApplied(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := newProxy(t, up, 1)
	p.Add(faultproxy.Rule{Match: faultproxy.BlobDelete(), Fault: faultproxy.Drop})
	if _, _, _, err := send(t, http.MethodDelete, p.URL()+"/acct/c/k/n.json", ""); err == nil {
		t.Fatal("the client got an answer")
	}
	if _, _, _, err := send(t, http.MethodDelete, p.URL()+"/acct/c?restype=container", ""); err != nil {
		t.Fatalf("a container delete is not a blob delete: %v", err)
	}
	if up.count() != 1 || p.Stats().Dropped != 1 {
		t.Fatalf("applied %d, stats %+v", up.count(), p.Stats())
	}
}

func TestProxy_SkipTimesAndSeededProbability(t *testing.T) {
	t.Parallel()
	fates := func(seed uint64) string {
		up := newUpstream(t)
		p := newProxy(t, up, seed)
		p.Add(faultproxy.Rule{Match: faultproxy.Write(), Fault: faultproxy.Busy, Skip: 2, Times: 5, Probability: 0.5})
		var b strings.Builder
		for range 30 {
			status, _, _, err := send(t, http.MethodPost, p.URL()+"/acct/t", "x")
			switch {
			case err != nil:
				t.Fatal(err)
			case status == http.StatusServiceUnavailable:
				b.WriteByte('B')
			default:
				b.WriteByte('.')
			}
		}
		// Reads never match Write().
		if status, _, _, _ := send(t, http.MethodGet, p.URL()+"/acct/t", ""); status != http.StatusCreated {
			t.Errorf("a read was faulted: %d", status)
		}
		return b.String()
	}
	a, b := fates(7), fates(7)
	if a != b {
		t.Fatalf("same seed, different fates:\n%s\n%s", a, b)
	}
	if !strings.HasPrefix(a, "..") || strings.Count(a, "B") != 5 {
		t.Fatalf("fates %s: want two skipped, then five faults among the rest", a)
	}
	if fates(8) == a && fates(9) == a {
		t.Fatalf("the seed does not matter: %s", a)
	}
}

func TestProxy_Remove_StopsTheRule(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := newProxy(t, up, 1)
	h := p.Add(faultproxy.Rule{Fault: faultproxy.Busy})
	if status, _, _, _ := send(t, http.MethodGet, p.URL()+"/x", ""); status != http.StatusServiceUnavailable {
		t.Fatalf("status %d", status)
	}
	h.Remove()
	if status, _, _, _ := send(t, http.MethodGet, p.URL()+"/x", ""); status != http.StatusCreated {
		t.Fatalf("after Remove: %d", status)
	}
}

func TestProxy_Outage_Modes(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := newProxy(t, up, 1)
	p.Outage(faultproxy.OutageBusy, time.Hour)
	if status, _, _, _ := send(t, http.MethodGet, p.URL()+"/x", ""); status != http.StatusServiceUnavailable {
		t.Fatalf("busy outage: %d", status)
	}
	p.Outage(faultproxy.OutageClose, time.Hour)
	if _, _, _, err := send(t, http.MethodGet, p.URL()+"/x", ""); err == nil {
		t.Fatal("close outage answered")
	}
	p.Outage(faultproxy.OutageRefuse, time.Hour)
	if _, _, _, err := send(t, http.MethodGet, p.URL()+"/x", ""); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("refuse outage: %v", err)
	}
	p.EndOutage()
	if status, _, _, err := send(t, http.MethodGet, p.URL()+"/x", ""); err != nil || status != http.StatusCreated {
		t.Fatalf("after the outage: %d %v", status, err)
	}
	if up.count() != 1 || p.Stats().OutageFailures != 2 || p.Stats().Refusals != 1 {
		t.Fatalf("applied %d, stats %+v", up.count(), p.Stats())
	}
}

func TestProxy_Outage_EndsByItself(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	p := newProxy(t, up, 1)
	p.Outage(faultproxy.OutageRefuse, 100*time.Millisecond)
	if _, _, _, err := send(t, http.MethodGet, p.URL()+"/x", ""); err == nil {
		t.Fatal("answered during the outage")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, _, err := send(t, http.MethodGet, p.URL()+"/x", "")
		if err == nil && status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after the outage: %d %v", status, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Outage(faultproxy.OutageBusy, 50*time.Millisecond)
	time.Sleep(80 * time.Millisecond)
	if status, _, _, _ := send(t, http.MethodGet, p.URL()+"/x", ""); status != http.StatusCreated {
		t.Fatalf("busy outage did not end: %d", status)
	}
}
