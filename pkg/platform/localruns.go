package platform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Defaults of LocalRunsOptions.
const (
	DefaultLocalWorkers  = 4
	DefaultLocalMaxRuns  = 10000
	DefaultLocalRetryGap = 50 * time.Millisecond
	// DefaultLocalMaxStreamBytes bounds the streams LocalRuns keeps, all runs together.
	DefaultLocalMaxStreamBytes = 64 << 20
)

// LocalRunsOptions configures LocalRuns. The zero value means the defaults.
type LocalRunsOptions struct {
	// Workers bounds the runs executing at once; 0 means 4.
	Workers int
	// MaxRuns bounds the runs kept; the oldest finished runs are forgotten first. 0 means
	// 10000.
	MaxRuns int
	// RetryGap is the pause before running again a run whose thread was busy; 0 means 50 ms.
	// A release of the thread by the platform routes (Wake) starts it at once; the gap is the
	// fallback for a thread freed otherwise (the stale-lock sweep).
	RetryGap time.Duration
	// MaxStreamBytes bounds the bytes of the runs' kept streams (RunStreams), all runs
	// together; the streams of the oldest finished runs are dropped first to make room. 0
	// means DefaultLocalMaxStreamBytes (64 MiB).
	MaxStreamBytes int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// LocalRuns is the in-process RunBackend: runs live in memory, a bounded pool of workers
// executes them, one run per thread at a time in submission order. Runs do not survive a
// restart; a durable backend is needed for that. Close stops the workers.
type LocalRuns struct {
	exec  RunExecutor
	opts  LocalRunsOptions
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	ready chan string // thread ids with a run to start

	mu      sync.Mutex
	runs    map[string]*localRun // by run id; guarded by mu
	order   []string             // run ids, oldest first; guarded by mu
	queues  map[string][]string  // thread id → queued run ids (head runs next); guarded by mu
	running map[string]bool      // thread id → a worker owns the thread; guarded by mu
	waiting map[string]*retry    // thread id → its head run waits for RetryGap; guarded by mu
	closed  bool                 // guarded by mu
	streams int                  // bytes of the runs' stream chunks; guarded by mu
}

// retry is a head run waiting for its thread: Wake or the timer, whichever comes first,
// hands the thread to a worker.
type retry struct{ timer *time.Timer }

type localRun struct {
	run    Run
	done   chan struct{}
	cancel context.CancelFunc // set while running
	chunks [][]byte           // its stream (RunStreams)
}

var _ RunBackend = (*LocalRuns)(nil)

// NewLocalRuns starts the workers of an in-process backend executing runs with exec.
func NewLocalRuns(exec RunExecutor, opts LocalRunsOptions) *LocalRuns {
	if opts.Workers <= 0 {
		opts.Workers = DefaultLocalWorkers
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = DefaultLocalMaxRuns
	}
	if opts.RetryGap <= 0 {
		opts.RetryGap = DefaultLocalRetryGap
	}
	if opts.MaxStreamBytes <= 0 {
		opts.MaxStreamBytes = DefaultLocalMaxStreamBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	l := &LocalRuns{
		exec: exec, opts: opts, ctx: ctx, stop: stop, ready: make(chan string, opts.MaxRuns),
		runs: map[string]*localRun{}, queues: map[string][]string{}, running: map[string]bool{},
		waiting: map[string]*retry{},
	}
	for range opts.Workers {
		l.wg.Add(1)
		go l.worker()
	}
	return l
}

// Close interrupts running runs, stops the workers and waits for them.
func (l *LocalRuns) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.stop()
	l.wg.Wait()
	return nil
}

// Submit implements RunBackend.
func (l *LocalRuns) Submit(_ context.Context, run Run) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("platform: local runs are closed")
	}
	if len(l.order) >= l.opts.MaxRuns && !l.evictLocked() {
		return fmt.Errorf("platform: %d runs are unfinished, the local backend is full", len(l.order))
	}
	l.runs[run.RunID] = &localRun{run: run, done: make(chan struct{})}
	l.order = append(l.order, run.RunID)
	l.queues[run.ThreadID] = append(l.queues[run.ThreadID], run.RunID)
	if !l.running[run.ThreadID] {
		l.running[run.ThreadID] = true
		l.ready <- run.ThreadID
	}
	return nil
}

// evictLocked forgets the oldest finished run; false when none is finished.
func (l *LocalRuns) evictLocked() bool {
	for i, id := range l.order {
		if l.runs[id].run.Status.Terminal() {
			l.dropStreamLocked(l.runs[id])
			delete(l.runs, id)
			l.order = slices.Delete(l.order, i, i+1)
			return true
		}
	}
	return false
}

func (l *LocalRuns) worker() {
	defer l.wg.Done()
	for {
		select {
		case <-l.ctx.Done():
			return
		case tid := <-l.ready:
			l.runNext(tid)
		}
	}
}

// runNext executes the head run of a thread the worker owns, then hands the thread on.
func (l *LocalRuns) runNext(tid string) {
	l.mu.Lock()
	q := l.queues[tid]
	if len(q) == 0 {
		delete(l.queues, tid)
		delete(l.running, tid)
		l.mu.Unlock()
		return
	}
	lr := l.runs[q[0]]
	ctx, cancel := context.WithCancel(l.ctx)
	lr.cancel = cancel
	lr.run.Status, lr.run.UpdatedAt = RunRunning, l.opts.Now().UTC()
	run := lr.run
	l.mu.Unlock()

	status, err := l.exec.ExecuteRun(ctx, run)
	interrupted := ctx.Err() != nil // read before cancel, which always sets it
	cancel()

	l.mu.Lock()
	defer l.mu.Unlock()
	lr.cancel = nil
	if errors.Is(err, ErrRetryLater) && !interrupted {
		lr.run.Status = RunPending
		w := &retry{}
		l.waiting[tid] = w
		w.timer = time.AfterFunc(l.opts.RetryGap, func() { l.requeue(tid, w) })
		return
	}
	if err != nil || status == "" {
		status = RunError
	}
	if interrupted && status != RunSuccess {
		status = RunInterrupted
	}
	l.finishLocked(lr, status)
	l.queues[tid] = l.queues[tid][1:]
	if len(l.queues[tid]) == 0 {
		delete(l.queues, tid)
		delete(l.running, tid)
		return
	}
	l.ready <- tid
}

// requeue hands a waiting thread to a worker, unless w is no longer its wait (Wake came
// first).
func (l *LocalRuns) requeue(tid string, w *retry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiting[tid] != w {
		return
	}
	delete(l.waiting, tid)
	if !l.closed {
		l.ready <- tid
	}
}

// Wake runs at once the next run of a thread that is waiting for the thread to be released
// (instead of after RetryGap); it does nothing for a thread with no waiting run. The platform
// routes call it when a run releases its thread.
func (l *LocalRuns) Wake(threadID string) {
	l.mu.Lock()
	w := l.waiting[threadID]
	l.mu.Unlock()
	if w != nil && w.timer.Stop() {
		l.requeue(threadID, w)
	}
}

// wakeRuns tells the run backend that a thread was released, when it listens (LocalRuns).
func (s *Service) wakeRuns(tid string) {
	if w, ok := s.runs.(interface{ Wake(string) }); ok {
		w.Wake(tid)
	}
}

func (l *LocalRuns) finishLocked(lr *localRun, status RunStatus) {
	lr.run.Status, lr.run.UpdatedAt = status, l.opts.Now().UTC()
	close(lr.done)
}

func (l *LocalRuns) lookup(threadID, runID string) (*localRun, error) {
	lr, ok := l.runs[runID]
	if !ok || lr.run.ThreadID != threadID {
		return nil, fmt.Errorf("run %q of thread %q: %w", runID, threadID, ErrRunNotFound)
	}
	return lr, nil
}

// Get implements RunBackend.
func (l *LocalRuns) Get(_ context.Context, threadID, runID string) (Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lr, err := l.lookup(threadID, runID)
	if err != nil {
		return Run{}, err
	}
	return lr.run, nil
}

// List implements RunBackend.
func (l *LocalRuns) List(_ context.Context, threadID string, status RunStatus, limit, offset int) ([]Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Run{}
	for i := len(l.order) - 1; i >= 0; i-- {
		r := l.runs[l.order[i]].run
		if r.ThreadID != threadID || (status != "" && r.Status != status) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		out = append(out, r)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// Join implements RunBackend.
func (l *LocalRuns) Join(ctx context.Context, threadID, runID string) (Run, error) {
	l.mu.Lock()
	lr, err := l.lookup(threadID, runID)
	l.mu.Unlock()
	if err != nil {
		return Run{}, err
	}
	select {
	case <-lr.done:
	case <-ctx.Done():
		return Run{}, fmt.Errorf("join run %q: %w", runID, ctx.Err())
	}
	return l.Get(ctx, threadID, runID)
}

// Cancel implements RunBackend.
func (l *LocalRuns) Cancel(ctx context.Context, threadID, runID string, wait bool) error {
	l.mu.Lock()
	lr, err := l.lookup(threadID, runID)
	if err != nil {
		l.mu.Unlock()
		return err
	}
	switch {
	case lr.run.Status.Terminal():
		l.mu.Unlock()
		return fmt.Errorf("cancel run %q: %w", runID, ErrRunFinished)
	case lr.cancel != nil:
		lr.cancel()
	default: // pending: drop it from the thread's queue (not the head a worker owns)
		q := l.queues[threadID]
		if i := slices.Index(q, runID); i > 0 || (i == 0 && !l.running[threadID]) {
			l.queues[threadID] = slices.Delete(q, i, i+1)
			l.finishLocked(lr, RunInterrupted)
		} else if i == 0 {
			// Head of a thread waiting to retry: mark it so the retry finishes it.
			l.queues[threadID] = q[1:]
			l.finishLocked(lr, RunInterrupted)
		}
	}
	l.mu.Unlock()
	if wait {
		_, err := l.Join(ctx, threadID, runID)
		return err
	}
	return nil
}

// Active implements RunBackend.
func (l *LocalRuns) Active(_ context.Context, threadID string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queues[threadID]) > 0, nil
}
