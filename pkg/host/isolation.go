package host

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// Per-user isolation on the hosting routes (Options.Isolation, SetIsolation;
// docs/http-hosting.md, "Per-user isolation"). Invoke, stream and state resolve the caller
// first: 401 without an identity (nor the master key), 403 for an identity header from an
// untrusted peer. A request without a thread id runs for any identified caller. A thread id
// must name a thread of the ThreadOwners record that the caller owns, else 404 `Thread '<id>'
// not found` (the state route's own answer for a missing thread). Invoke and stream with an
// id no thread has yet create the record, owned by the caller, unless a graph already holds
// state for that id (a thread from before isolation, or one whose record was deleted): that
// stays unreachable (404) except to the master key. Without a ThreadOwners (no platform
// routes) a thread id is refused with 403. The master key bypasses every thread check. With
// isolation off, the routes pay one atomic load of a nil pointer.

// ThreadOwners records who owns each thread: the platform routes' thread store, which
// platform.Mount attaches with SetIsolation. Implementations are safe for concurrent use.
type ThreadOwners interface {
	// ThreadOwner returns the owner recorded for thread tid (nil when it has none). Returns
	// an error wrapping ErrThreadNotFound when no thread has that id.
	ThreadOwner(ctx context.Context, tid string) (any, error)
	// CreateThread records a new thread tid owned by owner and returns owner; when a thread
	// tid exists already it changes nothing and returns that thread's owner. Returns an
	// error wrapping ErrThreadNotFound for an id that cannot name a thread.
	CreateThread(ctx context.Context, tid, owner string) (any, error)
}

// threadScope is the isolation of the hosting routes.
type threadScope struct {
	iso    *isolation.Isolation
	owners ThreadOwners // nil: no thread record, thread ids are refused
}

// Messages of the hosting routes' isolation refusals.
const (
	msgNoIdentity     = apierror.NoIdentityMessage
	msgUntrustedProxy = apierror.UntrustedPeerMessage
	msgNoThreadStore  = "Forbidden: with user isolation on, threads are reached through the platform routes (/threads), which this app does not serve"
)

// SetIsolation scopes the invoke, stream and state routes to the caller's threads under iso,
// with owners as the record of thread owners (nil: thread ids are refused unless the master
// key sends them); a nil iso turns the scope off. It replaces Options.Isolation. Call it at
// startup, before serving; platform.Mount calls it when its isolation is on.
func (a *GraphHostApp) SetIsolation(iso *isolation.Isolation, owners ThreadOwners) {
	if iso == nil {
		a.scope.Store(nil)
		return
	}
	a.scope.Store(&threadScope{iso: iso, owners: owners})
}

// resolve returns the request's caller under the scope; the zero Caller on a nil scope
// (isolation off), where it is inlined to one nil test.
func (sc *threadScope) resolve(r *http.Request) (isolation.Caller, error) {
	if sc == nil {
		return isolation.Caller{}, nil
	}
	return sc.caller(r)
}

// caller resolves the request's caller under the scope.
func (sc *threadScope) caller(r *http.Request) (isolation.Caller, error) {
	c, err := sc.iso.Caller(r)
	if err != nil {
		return c, apierror.UnresolvedCaller(err)
	}
	return c, nil
}

// checkThread lets caller use thread tid of g, or answers why not. With create (invoke and
// stream), an id no thread has yet becomes the caller's thread unless a graph holds state
// for it.
func (a *GraphHostApp) checkThread(ctx context.Context, sc *threadScope, c isolation.Caller, g *hostedGraph, tid string, create bool) error {
	if c.Admin {
		return nil
	}
	if sc.owners == nil {
		return apierror.New(apierror.ErrForbidden, msgNoThreadStore)
	}
	notFound := apierror.Newf(apierror.ErrNotFound, "Thread %s not found", pyRepr(tid))
	owner, err := sc.owners.ThreadOwner(ctx, tid)
	if errors.Is(err, ErrThreadNotFound) && create {
		var held bool
		if held, err = a.HoldsThread(ctx, tid); err == nil && held {
			return notFound
		}
		if err == nil {
			owner, err = sc.owners.CreateThread(ctx, tid, c.ID)
		}
	}
	switch {
	case errors.Is(err, ErrThreadNotFound):
		return notFound
	case apierror.StorageFull(err) != nil:
		return apierror.StorageFull(err) // the thread record does not fit the memory budget
	case err != nil:
		a.logger.Error("check thread owner", "graph", g.name, "thread_id", tid, "error", err)
		return apierror.New(apierror.ErrInternal, "Internal error while checking the thread's owner")
	case !c.Owns(owner):
		return notFound
	}
	return nil
}

// HoldsThread reports whether a graph of the app already keeps state for thread tid: a
// thread written before isolation was on, or whose record is gone, which no caller may claim
// (thread ids are global, so through any graph). It reads every stateful graph's state once;
// the hosting routes ask it when a thread id is first used, the platform's thread create
// when a caller names the id.
func (a *GraphHostApp) HoldsThread(ctx context.Context, tid string) (bool, error) {
	a.mu.RLock()
	graphs := slices.Clone(a.graphs)
	a.mu.RUnlock()
	for _, g := range graphs {
		if held, err := graphHoldsThread(ctx, g, tid); held || err != nil {
			return held, err
		}
	}
	return false, nil
}

// graphHoldsThread reports whether g keeps state for thread tid.
func graphHoldsThread(ctx context.Context, g *hostedGraph, tid string) (bool, error) {
	sg, ok := g.graph.(StatefulGraph)
	if !ok {
		return false, nil
	}
	var view StateView
	err := guard(func() error {
		var err error
		view, err = sg.GetState(ctx, tid)
		return err
	})
	switch {
	case errors.Is(err, ErrThreadNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	if len(view.Next) > 0 || len(view.Config) > 0 || !view.CreatedAt.IsZero() {
		return true, nil
	}
	values, err := marshalCompact(view.Values)
	if err != nil {
		return false, err
	}
	return string(values) != "null" && string(values) != "{}", nil
}
