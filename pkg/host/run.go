package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// PanicError is the error of a run whose graph panicked. The caller sees 500 (invoke) or an
// in-band error frame (stream); observers see this error.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("graph panicked: %v", e.Value) }

// newRunContext starts the observer context of a request.
func (a *GraphHostApp) newRunContext(r *http.Request, g *hostedGraph, endpoint string) RunContext {
	return RunContext{
		GraphName:       g.name,
		Endpoint:        endpoint,
		RunID:           newRunID(),
		StartedAtNS:     monotonicNS(),
		InvocationID:    funchost.InvocationID(r.Context()),
		Transport:       transportBuffered,
		HasCheckpointer: g.hasCheckpointer(),
		LockBackend:     a.lockBackend,
	}
}

// admission is a request that passed every pre-execution check.
type admission struct {
	req   *runRequest // &request
	owner string      // the caller's identity under isolation ("" none, or the master key)
	// hold counts the run's answer against owner's share of the response budget (respond.go);
	// closeStream, for a stream, ends its count of open event streams. The request's handler
	// releases both once the answer is written (free).
	hold        respbudget.Hold
	closeStream func()
	locked      bool
	token       string
	request     runRequest
}

// free stops counting the admission's answer and stream (respond.go); the request's handler
// calls it once its answer is written, whether or not admit passed.
func (adm *admission) free() {
	adm.hold.Release()
	if adm.closeStream != nil {
		adm.closeStream()
	}
}

// release frees the thread lock, if one was taken.
func (a *GraphHostApp) release(g *hostedGraph, adm *admission) {
	if adm.locked {
		a.lock.Release(g.name, adm.req.Config.ThreadID, adm.token)
	}
}

// admit runs checks 1–10 of the invoke contract: body size, JSON, request model, limits,
// configurable and thread id, checkpointer thread id, version, and the thread lock (taken only
// for graphs with a checkpointer), filling adm. Before the body is read, a request is refused
// 429 when the caller's answers still being sent fill its share of the response budget (or a
// stream its open streams; respond.go), and a checkpointed graph's 507 when the memory budget
// cannot take it (Options.MemoryBudget). The caller must release the admission, and free it
// once answered.
func (a *GraphHostApp) admit(r *http.Request, g *hostedGraph, kind requestKind, rc *RunContext, adm *admission) error {
	sc := a.scope.Load()
	caller, err := sc.resolve(r)
	if err != nil {
		return err
	}
	adm.owner = budgetOwner(caller)
	if err := a.responses().HoldIn(&adm.hold, adm.owner, respbudget.LoadEstimate); err != nil {
		return err // the caller's answers still being sent fill its share: nothing is read
	}
	if kind == streamRequestKind {
		if adm.closeStream, err = a.responses().OpenStream(adm.owner); err != nil {
			return err
		}
	}
	if rc.HasCheckpointer && a.opts.MemoryBudget != nil {
		// Its run writes checkpoints: new work, refused unread when the budget has no room.
		if err := apierror.NewWorkRefused(membudget.NewWork(r.Context(), adm.owner), a.opts.MemoryBudget, r, a.lim.maxBody); err != nil {
			return err
		}
	}
	body, err := readBody(r, a.lim.maxBody, nil)
	if err != nil {
		return err
	}
	req := &adm.request
	if err := parseRunRequestInto(req, body, kind, a.lim); err != nil {
		return err
	}
	rc.ThreadID, rc.StreamMode = req.Config.ThreadID, req.StreamMode
	checkpointed := rc.HasCheckpointer
	if checkpointed && req.Config.ThreadID == "" {
		return apierror.New(errInvalidConfig, "config.configurable.thread_id is required for checkpointed graphs")
	}
	if req.hasVersion && !g.acceptsVersion() {
		return apierror.Newf(errUnsupportedVer, "Graph %s does not accept a 'version' argument (requires langgraph>=1.1)", pyRepr(g.name))
	}
	if !req.hasVersion {
		req.Version = nil
	}
	if sc != nil && req.Config.ThreadID != "" {
		if err := a.checkThread(membudget.NewWork(r.Context(), adm.owner), sc, caller, g, req.Config.ThreadID, true); err != nil {
			return err
		}
	}
	adm.req = req
	if !checkpointed {
		return nil
	}
	tid := req.Config.ThreadID
	token, ok, err := a.lock.Acquire(r.Context(), g.name, tid, 0)
	if err != nil {
		a.logger.Error("acquire thread lock", "graph", g.name, "run_id", rc.RunID, "error", err)
		return apierror.New(errLockBackend, "Graph execution failed")
	}
	if !ok {
		return apierror.Newf(errLockContention, "Thread %s is currently in use by another request", pyRepr(tid))
	}
	adm.locked, adm.token = true, token
	return nil
}

// runContext returns the graph's context: the caller's new work on behalf of its identity
// (membudget.NewWork: what the graph stores in memory counts against it), cancelled when the
// request ends, and when a lock that can be lost (lock.LossNotifier) is lost.
func (a *GraphHostApp) runContext(ctx context.Context, g *hostedGraph, adm *admission) (context.Context, context.CancelFunc) {
	ctx = membudget.NewWork(ctx, adm.owner)
	if adm.locked {
		return lock.ContextWithLoss(ctx, a.lock, g.name, adm.req.Config.ThreadID, adm.token)
	}
	return context.WithCancel(ctx)
}

// guard runs fn, turning a panic into a *PanicError.
func guard(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return fn()
}

// newRunID returns a fresh 32-character lowercase hex id.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
