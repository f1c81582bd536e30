package faultproxy

import (
	"fmt"
	"net"
	"time"
)

// OutageMode is how a proxy fails requests during an outage.
type OutageMode int

// The outage modes.
const (
	// OutageRefuse stops listening: connections are refused, and open ones are closed.
	OutageRefuse OutageMode = iota + 1
	// OutageClose accepts connections and closes each without an answer, forwarding nothing.
	OutageClose
	// OutageBusy answers every request 503 ServerBusy, forwarding nothing.
	OutageBusy
)

// String names the mode: "refuse", "close" or "busy".
func (m OutageMode) String() string {
	switch m {
	case OutageRefuse:
		return "refuse"
	case OutageClose:
		return "close"
	case OutageBusy:
		return "busy"
	}
	return fmt.Sprintf("OutageMode(%d)", int(m))
}

// Outage fails every request for d from now, in the given mode; rules are not consulted
// meanwhile. A new outage replaces the one in force.
func (p *Proxy) Outage(mode OutageMode, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.outage, p.outageUntil = mode, time.Now().Add(d)
	if p.relisten != nil {
		p.relisten.Stop()
		p.relisten = nil
	}
	if mode != OutageRefuse {
		p.listenLocked()
		return
	}
	p.stats.Refusals++
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.relisten = time.AfterFunc(d, p.EndOutage)
}

// EndOutage ends the outage in force, if any, at once.
func (p *Proxy) EndOutage() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outage, p.outageUntil = 0, time.Time{}
	if p.relisten != nil {
		p.relisten.Stop()
		p.relisten = nil
	}
	p.listenLocked()
}

// listenLocked listens again on the proxy's address after a refusing outage. The port was
// the proxy's a moment ago; should another process take it meanwhile, the proxy stays
// closed and its log says so.
func (p *Proxy) listenLocked() {
	if p.ln != nil || p.closed {
		return
	}
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.ln = ln
			go func() { _ = p.srv.Serve(ln) }()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p.logf != nil {
		p.logf("faultproxy %s: listen again after an outage: %v", p.addr, err)
	}
}
