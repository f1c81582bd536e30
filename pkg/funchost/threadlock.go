package funchost

import "github.com/funcgraph/funcgraph/pkg/lock"

// SetThreadLock records the thread lock that the graph hosting app on this function app runs
// under (host.New calls it), so that whoever serves the app can check it against the
// deployment's settings (launch refuses a lock other than the one GRAPH_LOCK_BACKEND asks for).
func (a *FunctionApp) SetThreadLock(l lock.ThreadLock) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.threadLock = l
}

// ThreadLock returns the lock recorded by SetThreadLock; nil when no hosting app is on the
// function app.
func (a *FunctionApp) ThreadLock() lock.ThreadLock {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.threadLock
}
