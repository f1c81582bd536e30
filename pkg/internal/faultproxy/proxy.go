package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what a rule does to a request it picks.
type Fault int

// The faults.
const (
	// LoseReply forwards the request, reads the service's answer and then closes the client's
	// connection without a byte of it: the write happened, the client cannot know.
	LoseReply Fault = iota + 1
	// Busy answers 503 with the storage error code ServerBusy, without forwarding.
	Busy
	// Drop closes the client's connection without forwarding: nothing happened.
	Drop
)

// String names the fault as the proxy logs it: "lose reply", "busy" or "drop".
func (f Fault) String() string {
	switch f {
	case LoseReply:
		return "lose reply"
	case Busy:
		return "busy"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Rule picks requests and says what to do to them. The first rule (in the order added) that
// fires for a request decides its fate; requests no rule fires for are forwarded.
type Rule struct {
	// Name labels the rule in logs.
	Name string
	// Match selects the requests the rule applies to; nil matches every request.
	Match Matcher
	// Fault is applied to the requests the rule fires for.
	Fault Fault
	// Skip lets the first Skip matching requests through.
	Skip int
	// Times is the most requests the rule fires for; 0 means no limit.
	Times int
	// Probability, between 0 and 1, is the chance that the rule fires for a matching request
	// past Skip (drawn from the proxy's seeded source); 0 means always.
	Probability float64
}

// Handle is a rule added to a proxy.
type Handle struct {
	rule  Rule
	p     *Proxy
	seen  int // guarded by p.mu
	fired atomic.Int64
}

// Fired returns how many requests the rule has faulted.
func (h *Handle) Fired() int { return int(h.fired.Load()) }

// Remove takes the rule off its proxy; requests it would have picked are forwarded.
func (h *Handle) Remove() {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	for i, r := range h.p.rules {
		if r == h {
			h.p.rules = append(h.p.rules[:i:i], h.p.rules[i+1:]...)
			return
		}
	}
}

// Stats counts what a proxy did.
type Stats struct {
	// Requests counts every request read (not connections refused during an outage).
	Requests int
	// Forwarded counts requests the service answered and the client got the answer of.
	Forwarded int
	// LostReplies, Busy and Dropped count the faults rules injected.
	LostReplies, Busy, Dropped int
	// OutageFailures counts requests failed by an outage (closed or answered 503), and
	// Refusals the outages that refused connections.
	OutageFailures, Refusals int
}

// Options tunes a proxy. The zero value is ready to use.
type Options struct {
	// Seed seeds the source of rules' Probability; the same seed and requests give the same
	// faults.
	Seed uint64
	// Logf, if set, receives one line per injected fault (t.Logf fits).
	Logf func(format string, args ...any)
}

// Proxy is a fault-injecting reverse proxy on a loopback port in front of one upstream
// service endpoint. Safe for concurrent use.
type Proxy struct {
	upstream *url.URL
	addr     string
	client   *http.Client
	srv      *http.Server
	logf     func(string, ...any)

	mu          sync.Mutex
	ln          net.Listener // nil while an outage refuses connections
	rules       []*Handle
	rng         *rand.Rand
	outage      OutageMode
	outageUntil time.Time
	relisten    *time.Timer
	conns       map[net.Conn]struct{}
	closed      bool
	stats       Stats
}

// New starts a proxy on 127.0.0.1 (a free port) forwarding to upstream, a URL whose scheme
// and host are used (e.g. "http://127.0.0.1:10002"); request paths are passed through.
func New(upstream string, opts *Options) (*Proxy, error) {
	if opts == nil {
		opts = &Options{}
	}
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("parse upstream %q: want scheme://host[:port]", upstream)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	p := &Proxy{
		upstream: &url.URL{Scheme: u.Scheme, Host: u.Host},
		addr:     ln.Addr().String(),
		client:   &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}},
		logf:     opts.Logf,
		ln:       ln,
		rng:      rand.New(rand.NewPCG(opts.Seed, 0xfa017)),
		conns:    map[net.Conn]struct{}{},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ConnState: p.track}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL returns the proxy's base URL, "http://127.0.0.1:<port>".
func (p *Proxy) URL() string { return "http://" + p.addr }

// Add adds a rule after the existing ones and returns its handle.
func (p *Proxy) Add(r Rule) *Handle {
	h := &Handle{rule: r, p: p}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, h)
	return h
}

// Stats returns the counters so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	if p.relisten != nil {
		p.relisten.Stop()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.client.CloseIdleConnections()
	return err
}

// track follows the server's connections, so an outage can close them.
func (p *Proxy) track(c net.Conn, s http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s {
	case http.StateNew:
		p.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
	}
}

// ServeHTTP applies the outage or the first rule that fires, else forwards.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query(), Header: r.Header, Body: body}
	mode, fault, name := p.decide(req)
	switch {
	case mode == OutageBusy || fault == Busy:
		p.log(name, fault, req)
		writeBusy(w, r)
	case mode == OutageClose || fault == Drop:
		p.log(name, fault, req)
		hangUp(w)
	case fault == LoseReply:
		// The service must apply the write even though the client is cut off.
		if _, _, err := p.forward(context.WithoutCancel(r.Context()), r, body); err == nil {
			p.log(name, fault, req) // answered by the service, never relayed
		}
		hangUp(w)
	default:
		resp, rbody, err := p.forward(r.Context(), r, body)
		if err != nil {
			http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		p.mu.Lock()
		p.stats.Forwarded++
		p.mu.Unlock()
		relay(w, resp, rbody)
	}
}

// decide counts the request and returns the outage in force, or the fault of the first rule
// that fires (0: none).
func (p *Proxy) decide(req *Request) (OutageMode, Fault, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Requests++
	if p.outage != 0 && time.Now().Before(p.outageUntil) {
		p.stats.OutageFailures++
		return p.outage, 0, "outage"
	}
	for _, h := range p.rules {
		if h.rule.Match != nil && !h.rule.Match(req) {
			continue
		}
		h.seen++
		if h.seen <= h.rule.Skip || (h.rule.Times > 0 && h.Fired() >= h.rule.Times) {
			continue
		}
		if h.rule.Probability > 0 && p.rng.Float64() >= h.rule.Probability {
			continue
		}
		h.fired.Add(1)
		switch h.rule.Fault {
		case LoseReply:
			p.stats.LostReplies++
		case Busy:
			p.stats.Busy++
		case Drop:
			p.stats.Dropped++
		}
		return 0, h.rule.Fault, h.rule.Name
	}
	return 0, 0, ""
}

func (p *Proxy) log(name string, f Fault, req *Request) {
	if p.logf == nil {
		return
	}
	what := f.String()
	if f == 0 {
		what = "outage"
	}
	p.logf("faultproxy %s: %s %s %s", p.addr, what, req.Method, req.Path+" ("+name+")")
}

// hopHeaders are not forwarded (RFC 9110 section 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward sends the request upstream and reads the whole answer.
func (p *Proxy) forward(ctx context.Context, r *http.Request, body []byte) (*http.Response, []byte, error) {
	target := *p.upstream
	target.Path, target.RawPath, target.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	out, err := http.NewRequestWithContext(ctx, r.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("build upstream request: %w", err)
	}
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	out.ContentLength = int64(len(body))
	resp, err := p.client.Do(out)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	rbody, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("read upstream answer: %w", err)
	}
	return resp, rbody, nil
}

// relay writes the service's answer to the client.
func relay(w http.ResponseWriter, resp *http.Response, body []byte) {
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// writeBusy answers 503 ServerBusy the way the storage services do: the error code in the
// x-ms-error-code header and in the body (OData JSON for a table client, XML otherwise).
func writeBusy(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-ms-error-code", "ServerBusy")
	w.Header().Set("Retry-After", "0")
	const msg = "The server is busy."
	if strings.Contains(r.Header.Get("Accept"), "json") {
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"`+msg+`"}}}`)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>`+msg+`</Message></Error>`)
}

// hangUp resets the client's connection without an answer.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(errors.New("faultproxy: the connection cannot be hijacked"))
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // a reset, as a dropped connection reads to the client
	}
	_ = conn.Close()
}
