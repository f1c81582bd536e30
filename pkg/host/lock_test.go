package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

// gate is a graph that blocks in Invoke until released, signalling each entry.
type gate struct {
	fakeInvoker
	entered chan string
	release chan struct{}
}

func newGate() *gate {
	g := &gate{entered: make(chan string, 8), release: make(chan struct{})}
	g.checkpointer = true
	g.invoke = func(ctx context.Context, req Request) (any, error) {
		g.entered <- req.Config.ThreadID
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]string{"thread": req.Config.ThreadID}, nil
	}
	return g
}

func invokeBody(thread string) string {
	return `{"input":{},"config":{"configurable":{"thread_id":"` + thread + `"}}}`
}

func TestInvoke_ConcurrentRequests_SameThreadConflictsOtherThreadsRun(t *testing.T) {
	tests := []struct {
		name           string
		first, second  string // graph/thread of the two requests
		wantSecondCode int
	}{
		{"same graph and thread: 200 and 409", "a/t1", "a/t1", 409},
		{"same graph, other thread: both 200", "a/t1", "a/t2", 200},
		{"other graph, same thread: both 200", "a/t1", "b/t1", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ga, gb := newGate(), newGate()
			app := testApp(t, Options{}, map[string]InvocableGraph{"a": ga, "b": gb}, nil)
			gates := map[string]*gate{"a": ga, "b": gb}
			for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
				t.Run(tr.Name, func(t *testing.T) {
					ga.release, gb.release = make(chan struct{}), make(chan struct{})
					split := func(s string) (string, string) { return s[:1], s[2:] }
					g1, t1 := split(tt.first)
					g2, t2 := split(tt.second)
					var wg sync.WaitGroup
					var first response
					wg.Add(1)
					go func() {
						defer wg.Done()
						first = call(t, tr, "POST", "/api/graphs/"+g1+"/invoke", invokeBody(t1), tr.FunctionKey)
					}()
					<-gates[g1].entered // the first run holds its lock
					var second response
					if tt.wantSecondCode == 200 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							second = call(t, tr, "POST", "/api/graphs/"+g2+"/invoke", invokeBody(t2), tr.FunctionKey)
						}()
						<-gates[g2].entered // both run at once
					} else {
						// Answered at once while the first run holds the lock.
						second = call(t, tr, "POST", "/api/graphs/"+g2+"/invoke", invokeBody(t2), tr.FunctionKey)
					}
					close(ga.release)
					close(gb.release)
					wg.Wait()
					if first.status != 200 {
						t.Fatalf("first: %d %s", first.status, first.body)
					}
					if second.status != tt.wantSecondCode {
						t.Fatalf("second: %d %s, want %d", second.status, second.body, tt.wantSecondCode)
					}
					if tt.wantSecondCode == 409 && second.body != errBody("Thread 't1' is currently in use by another request") {
						t.Fatalf("409 body = %s", second.body)
					}
					// The lock is free again.
					ga.release, gb.release = make(chan struct{}), make(chan struct{})
					close(ga.release)
					close(gb.release)
					again := call(t, tr, "POST", "/api/graphs/"+g2+"/invoke", invokeBody(t2), tr.FunctionKey)
					<-gates[g2].entered
					if again.status != 200 {
						t.Fatalf("after release: %d %s", again.status, again.body)
					}
				})
			}
		})
	}
}

// countingLock wraps a lock and records acquires and releases.
type countingLock struct {
	lock.ThreadLock
	mu       sync.Mutex
	acquired int
	released int
	err      error
}

func (l *countingLock) Acquire(ctx context.Context, g, tid string, timeout time.Duration) (string, bool, error) {
	if l.err != nil {
		return "", false, l.err
	}
	tok, ok, err := l.ThreadLock.Acquire(ctx, g, tid, timeout)
	if ok {
		l.mu.Lock()
		l.acquired++
		l.mu.Unlock()
	}
	return tok, ok, err
}

func (l *countingLock) Release(g, tid, token string) {
	l.mu.Lock()
	l.released++
	l.mu.Unlock()
	l.ThreadLock.Release(g, tid, token)
}

func TestInvoke_LockLifecycle_ReleasedOnEveryPath(t *testing.T) {
	tests := []struct {
		name         string
		graph        *fakeInvoker
		wantStatus   int
		wantAcquires int
	}{
		{"success", &fakeInvoker{checkpointer: true}, 200, 1},
		{"graph error", &fakeInvoker{checkpointer: true, invoke: func(context.Context, Request) (any, error) { return nil, errors.New("x") }}, 500, 1},
		{"graph panic", &fakeInvoker{checkpointer: true, invoke: func(context.Context, Request) (any, error) { panic("x") }}, 500, 1},
		{"no checkpointer takes no lock", &fakeInvoker{}, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := &countingLock{ThreadLock: lock.NewInProcessThreadLock()}
			app := testApp(t, Options{ThreadLock: cl}, map[string]InvocableGraph{"g": tt.graph}, nil)
			for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
				for range 2 { // a second call proves the first released
					got := call(t, tr, "POST", "/api/graphs/g/invoke", invokeBody("t1"), tr.FunctionKey)
					if got.status != tt.wantStatus {
						t.Fatalf("%s: status %d %s", tr.Name, got.status, got.body)
					}
				}
			}
			cl.mu.Lock()
			defer cl.mu.Unlock()
			if cl.acquired != 4*tt.wantAcquires || cl.released != cl.acquired {
				t.Fatalf("acquired %d released %d, want %d each", cl.acquired, cl.released, 4*tt.wantAcquires)
			}
		})
	}
}

func TestInvoke_LockBackendError_500NothingHeld(t *testing.T) {
	cl := &countingLock{ThreadLock: lock.NewInProcessThreadLock(), err: errors.New("storage down")}
	obs := &recordingObserver{}
	app := testApp(t, Options{ThreadLock: cl, Observer: obs}, map[string]InvocableGraph{"g": &fakeInvoker{checkpointer: true}}, nil)
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		obs.reset()
		got := call(t, tr, "POST", "/api/graphs/g/invoke", invokeBody("t1"), tr.FunctionKey)
		if got.status != 500 || got.body != errBody("Graph execution failed") {
			t.Fatalf("%s: %d %s", tr.Name, got.status, got.body)
		}
		if ev := obs.events(); fmt.Sprint(ev) != "[[rejected:lock_error]]" {
			t.Fatalf("events = %v", ev)
		}
	}
}

// losingLock is an in-process lock whose holds can be lost on demand.
type losingLock struct {
	*lock.InProcessThreadLock
	lost chan struct{}
}

func (l *losingLock) Lost(string, string, string) <-chan struct{} { return l.lost }

func TestInvoke_LockLost_CancelsGraphContext(t *testing.T) {
	ll := &losingLock{InProcessThreadLock: lock.NewInProcessThreadLock(), lost: make(chan struct{})}
	causes := make(chan error, 1)
	g := &fakeInvoker{checkpointer: true, invoke: func(ctx context.Context, _ Request) (any, error) {
		close(ll.lost)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil, ctx.Err()
	}}
	app := testApp(t, Options{ThreadLock: ll}, map[string]InvocableGraph{"g": g}, nil)
	tr := funchosttest.Transports(t, app.FunctionApp())[0]
	got := call(t, tr, "POST", "/api/graphs/g/invoke", invokeBody("t1"), tr.FunctionKey)
	if got.status != 500 {
		t.Fatalf("status %d", got.status)
	}
	if cause := <-causes; !errors.Is(cause, lock.ErrLockLost) {
		t.Fatalf("cause = %v, want lock.ErrLockLost", cause)
	}
}
