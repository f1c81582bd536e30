package funchosttest

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// StallBytes is the size past which a write to a StalledWriter blocks: an answer larger than
// it stays with the server, an error answer (smaller) goes through.
const StallBytes = 64 << 10

// StalledWriter is an http.ResponseWriter whose client stopped reading: a write of more than
// StallBytes tells SlowReaders so and blocks until the readers are released; smaller writes
// go through. It records the status and the body written.
type StalledWriter struct {
	header  http.Header
	started chan<- struct{}
	release <-chan struct{}

	once sync.Once // started is told once

	mu   sync.Mutex
	code int
	body strings.Builder
}

// Header implements http.ResponseWriter.
func (w *StalledWriter) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter; the first status counts.
func (w *StalledWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}

// Write implements http.ResponseWriter, blocking for a write of more than StallBytes.
func (w *StalledWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if len(p) > StallBytes {
		w.once.Do(func() { w.started <- struct{}{} })
		<-w.release
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.body.Write(p)
	return len(p), nil
}

// Result returns the status and the body written so far.
func (w *StalledWriter) Result() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.code, w.body.String()
}

// SlowReaders serves requests one after the other with serve, each into a StalledWriter whose
// client reads nothing, until one is answered without stalling (a refusal) or max have
// stalled. It returns how many stalled, holding their answers with the server, and the writer
// of the request answered (nil when none was). release lets the stalled clients read their
// answers and waits for their requests to end; it also runs at the test's end.
func SlowReaders(t testing.TB, max int, serve func(w http.ResponseWriter)) (held int, answered *StalledWriter, release func()) {
	t.Helper()
	ch := make(chan struct{})
	var wg sync.WaitGroup
	var once sync.Once
	release = func() {
		once.Do(func() { close(ch) })
		wg.Wait()
	}
	t.Cleanup(release)
	for held < max {
		started, done := make(chan struct{}, 1), make(chan struct{})
		w := &StalledWriter{header: http.Header{}, started: started, release: ch}
		wg.Go(func() { defer close(done); serve(w) })
		select {
		case <-started:
			held++
		case <-done:
			return held, w, release
		}
	}
	return held, nil, release
}
