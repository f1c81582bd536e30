package memory

import "time"

// NextVisible returns the time the earliest message becomes visible (it may be now or past),
// and false when the queue is empty. A test clock uses it to skip to the next timer.
func (q *Queue) NextVisible() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.heap) == 0 {
		return time.Time{}, false
	}
	return q.heap[0].visibleAt, true
}
