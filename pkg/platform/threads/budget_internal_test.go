package threads

// HeldBytes recomputes what m holds, as its budget accounts it.
func HeldBytes(m *Memory) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, t := range m.threads {
		n += threadBytes(&t)
	}
	return n
}
