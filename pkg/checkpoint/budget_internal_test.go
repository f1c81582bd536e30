package checkpoint

// HeldBytes recomputes what m holds, as its budget accounts it, from its stored checkpoints,
// values and writes.
func HeldBytes(m *Memory) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total int64
	for _, t := range m.threads {
		n := threadBytes
		for _, ns := range t.ns {
			for _, c := range ns.cps {
				n += itemBytes + len(c.cp.Metadata)
				if !c.committed() {
					n -= len(c.cp.Metadata)
				}
				for _, w := range c.writes {
					n += itemBytes + len(w.Value.Data)
				}
			}
			for _, vers := range ns.values {
				for _, v := range vers {
					n += itemBytes + len(v.v.Data)
				}
			}
		}
		total += int64(n)
	}
	return total
}
