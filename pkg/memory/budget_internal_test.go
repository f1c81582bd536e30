package memory

// heldBytes recomputes what s holds, as its budget accounts it (budget.go).
func (s *Store) heldBytes() int64 {
	var n int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for pk, p := range sh.parts {
			n += partitionBytes(pk)
			for _, r := range p.rows {
				n += rowBytes(r.data)
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// heldBytes recomputes what p holds, as its budget accounts it.
func (p *PayloadStore) heldBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for k, d := range p.data {
		n += payloadBytes(k, len(d))
	}
	return n
}

// HeldBytes recomputes what s and p hold (either may be nil), for the external tests.
func HeldBytes(s *Store, p *PayloadStore) int64 {
	var n int64
	if s != nil {
		n += s.heldBytes()
	}
	if p != nil {
		n += p.heldBytes()
	}
	return n
}

// heldBytes recomputes what l holds, as its budget accounts it.
func (l *LiveStore) heldBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for k, log := range l.logs {
		n += liveBytes(k, cap(log.data))
	}
	return n
}

// HeldLiveBytes recomputes what l holds, for the external tests.
func HeldLiveBytes(l *LiveStore) int64 { return l.heldBytes() }
