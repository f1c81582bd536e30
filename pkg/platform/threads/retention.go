package threads

// DefaultMemoryMaxThreads is the bound of the in-memory store the platform routes use when
// no Store is given: at most 16 MiB of values each, but a chat thread holds a few KB, so
// 10 000 threads are tens of MB.
const DefaultMemoryMaxThreads = 10000

// NewBoundedMemory returns an empty in-memory store that keeps at most maxThreads threads
// (maxThreads ≤ 0: DefaultMemoryMaxThreads). Creating a thread past the bound first drops
// the threads that are not busy, least recently updated first, until one fits; a busy
// thread is never dropped, so while every thread is busy the store grows past the bound.
// A dropped thread reads as deleted (ErrThreadNotFound).
func NewBoundedMemory(maxThreads int) *Memory {
	if maxThreads <= 0 {
		maxThreads = DefaultMemoryMaxThreads
	}
	return &Memory{threads: map[string]Thread{}, maxThreads: maxThreads}
}

// makeRoom drops, while the store is full, the least recently updated thread that is not
// busy. It scans every thread once per drop: creating past the bound costs O(threads), as a
// search does. m.mu must be held.
func (m *Memory) makeRoom() {
	for m.maxThreads > 0 && len(m.threads) >= m.maxThreads {
		victim, found := "", false
		var oldest Thread
		for id, t := range m.threads {
			if t.Status == StatusBusy {
				continue
			}
			if !found || t.UpdatedAt.Before(oldest.UpdatedAt) || t.UpdatedAt.Equal(oldest.UpdatedAt) && id < victim {
				victim, oldest, found = id, t, true
			}
		}
		if !found {
			return
		}
		delete(m.threads, victim)
	}
}
