package faultproxy

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Set is one proxy per service endpoint of a storage connection string.
type Set struct {
	// Blob, Queue and Table are the proxies of the endpoints the connection string names (nil
	// for an endpoint it does not name).
	Blob, Queue, Table *Proxy
	conn               string
}

// StartSet starts a proxy in front of each of BlobEndpoint, QueueEndpoint and TableEndpoint
// of connString (at least one must be set; "UseDevelopmentStorage=true" is not expanded) and
// returns them with the connection string that points at them. Each proxy gets its own seed
// derived from opts.Seed.
func StartSet(connString string, opts *Options) (*Set, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Set{}
	var parts []string
	for i, part := range strings.Split(connString, ";") {
		k, v, ok := strings.Cut(part, "=")
		var slot **Proxy
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "blobendpoint":
			slot = &s.Blob
		case "queueendpoint":
			slot = &s.Queue
		case "tableendpoint":
			slot = &s.Table
		}
		if !ok || slot == nil {
			if strings.TrimSpace(part) != "" {
				parts = append(parts, part)
			}
			continue
		}
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || u.Host == "" {
			_ = s.Close()
			return nil, fmt.Errorf("start proxies: %s is not a URL", strings.TrimSpace(k))
		}
		o := *opts
		o.Seed = opts.Seed + uint64(i)*0x9e3779b97f4a7c15
		p, err := New(u.Scheme+"://"+u.Host, &o)
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("start proxy for %s: %w", strings.TrimSpace(k), err)
		}
		*slot = p
		parts = append(parts, strings.TrimSpace(k)+"="+p.URL()+u.EscapedPath())
	}
	if s.Blob == nil && s.Queue == nil && s.Table == nil {
		return nil, errors.New("start proxies: the connection string names no service endpoint")
	}
	s.conn = strings.Join(parts, ";") + ";"
	return s, nil
}

// ConnectionString returns the connection string with every named endpoint replaced by its
// proxy's.
func (s *Set) ConnectionString() string { return s.conn }

// Proxies returns the proxies that run, in the order blob, queue, table.
func (s *Set) Proxies() []*Proxy {
	var out []*Proxy
	for _, p := range []*Proxy{s.Blob, s.Queue, s.Table} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Outage starts the same outage on every proxy.
func (s *Set) Outage(mode OutageMode, d time.Duration) {
	for _, p := range s.Proxies() {
		p.Outage(mode, d)
	}
}

// EndOutage ends the outage on every proxy.
func (s *Set) EndOutage() {
	for _, p := range s.Proxies() {
		p.EndOutage()
	}
}

// Stats returns the sum of every proxy's counters.
func (s *Set) Stats() Stats {
	var t Stats
	for _, p := range s.Proxies() {
		st := p.Stats()
		t.Requests += st.Requests
		t.Forwarded += st.Forwarded
		t.LostReplies += st.LostReplies
		t.Busy += st.Busy
		t.Dropped += st.Dropped
		t.OutageFailures += st.OutageFailures
		t.Refusals += st.Refusals
	}
	return t
}

// Close stops every proxy.
func (s *Set) Close() error {
	var errs []error
	for _, p := range s.Proxies() {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
