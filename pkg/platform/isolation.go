package platform

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// Per-user isolation (Options.Isolation). Every route resolves its caller first (401 without
// an identity, 403 for an identity header from an untrusted peer). A thread's owner is its
// metadata key "owner", set to the caller's identity when a non-admin creates it (through
// threads.create, a run's if_not_exists create, or a threadless run's temporary thread); a
// run is its thread's. Another identity's thread answers exactly as a missing one (404), on
// every thread, state and run route; search and count only see the caller's threads. Mount
// hands the isolation to the hosting app with the thread store as its record of owners
// (hostingOwners), so the hosting routes reach the same threads under the same rules; a
// durable assistant's engine run records the thread's owner (RunRequest.owner,
// DurableRunRequest.Owner). With isolation off the checks are one nil test.

type callerKey struct{}

// isolate wraps a route with the caller check when isolation is on, and marks its context as
// the caller's new work (membudget.NewWork: what it stores in memory counts against the
// caller's identity, the master key's against none).
func (s *Service) isolate(h http.HandlerFunc) http.HandlerFunc {
	if s.iso == nil {
		return func(w http.ResponseWriter, r *http.Request) {
			h(w, r.WithContext(membudget.NewWork(r.Context(), "")))
		}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.iso.Caller(r)
		if err != nil {
			writeError(w, callerError(err), s.logger)
			return
		}
		owner := c.ID
		if c.Admin {
			owner = ""
		}
		h(w, r.WithContext(membudget.NewWork(context.WithValue(r.Context(), callerKey{}, c), owner)))
	}
}

// admitNew wraps a route that creates a thread or a run (inside isolate, so the caller's
// identity is known): when the memory budget cannot take its declared body
// (apierror.NewWorkRefused) it answers the 507 before reading the body; otherwise h runs.
func (s *Service) admitNew(h http.HandlerFunc) http.HandlerFunc {
	if s.budget == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if err := apierror.NewWorkRefused(r.Context(), s.budget, r, s.maxBody); err != nil {
			writeError(w, err, s.logger)
			return
		}
		h(w, r)
	}
}

// callerError is the public error of a caller that cannot be resolved.
func callerError(err error) error {
	return apierror.UnresolvedCaller(err)
}

// caller returns the request's caller: an admin when isolation is off.
func (s *Service) caller(ctx context.Context) isolation.Caller {
	if s.iso == nil {
		return isolation.Caller{Admin: true}
	}
	c, _ := ctx.Value(callerKey{}).(isolation.Caller) // missing: owns nothing
	return c
}

// owns reports whether the request's caller may see thread t.
func (s *Service) owns(ctx context.Context, t threads.Thread) bool {
	return s.iso == nil || s.caller(ctx).Owns(t.Metadata[isolation.OwnerKey])
}

// visibleThread returns thread tid if the caller may see it, else the 404 of a missing one.
func (s *Service) visibleThread(ctx context.Context, tid string) (threads.Thread, error) {
	t, err := s.store.Get(ctx, tid)
	if err != nil {
		return t, storeError(err, tid)
	}
	if !s.owns(ctx, t) {
		return threads.Thread{}, threadNotFound(tid)
	}
	return t, nil
}

// checkThread is visibleThread for routes that do not need the record: nothing when
// isolation is off.
func (s *Service) checkThread(ctx context.Context, tid string) error {
	if s.iso == nil {
		return nil
	}
	_, err := s.visibleThread(ctx, tid)
	return err
}

// ownedMetadata returns the metadata a non-admin caller's new thread or run gets: meta with
// the owner set to the caller (whatever the client sent). An admin's is kept as given.
func (s *Service) ownedMetadata(ctx context.Context, meta map[string]any) map[string]any {
	c := s.caller(ctx)
	if c.Admin {
		return meta
	}
	out := make(map[string]any, len(meta)+1)
	maps.Copy(out, meta)
	out[isolation.OwnerKey] = c.ID
	return out
}

// threadOwner is thread t's owner under isolation ("" when off or ownerless): what a run on
// it records as its owner where runs are listed by owner (a durable assistant's engine run).
func (s *Service) threadOwner(t threads.Thread) string {
	if s.iso == nil {
		return ""
	}
	o, _ := t.Metadata[isolation.OwnerKey].(string)
	return o
}

// checkOwnerPatch refuses a non-admin's metadata patch that names another owner (403); one
// that repeats the caller's own identity passes.
func (s *Service) checkOwnerPatch(ctx context.Context, meta map[string]any) error {
	c := s.caller(ctx)
	v, ok := meta[isolation.OwnerKey]
	if !ok || c.Owns(v) {
		return nil
	}
	return apierror.New(apierror.ErrForbidden, "Forbidden: metadata key 'owner' is set by the server")
}

// hostingOwners is the thread store as the hosting routes' record of thread owners
// (host.ThreadOwners): a hosting invoke or stream with a new thread id creates the platform
// thread, owned by the caller, so the thread is the same one on both route families.
type hostingOwners struct{ s *Service }

var _ host.ThreadOwners = hostingOwners{}

// ThreadOwner implements host.ThreadOwners.
func (o hostingOwners) ThreadOwner(ctx context.Context, tid string) (any, error) {
	t, err := o.s.store.Get(ctx, tid)
	if errors.Is(err, threads.ErrThreadNotFound) {
		return nil, fmt.Errorf("get thread %q: %w", tid, host.ErrThreadNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get thread %q: %w", tid, err)
	}
	return t.Metadata[isolation.OwnerKey], nil
}

// CreateThread implements host.ThreadOwners: an idle thread whose metadata is {"owner":
// owner}. An id the platform routes refuse ("." and ".."), or one whose state a durable
// assistant keeps (the hosting app checked its own graphs already; checkClaim), names no
// thread.
func (o hostingOwners) CreateThread(ctx context.Context, tid, owner string) (any, error) {
	if err := validThreadID(tid); err != nil {
		return nil, fmt.Errorf("create thread %q: %w", tid, host.ErrThreadNotFound)
	}
	if o.s.durable != nil {
		if _, err := o.s.durable.State(ctx, tid); err == nil {
			return nil, fmt.Errorf("create thread %q: state is kept for it: %w", tid, host.ErrThreadNotFound)
		} else if !errors.Is(err, host.ErrThreadNotFound) {
			return nil, fmt.Errorf("create thread %q: check for kept state: %w", tid, err)
		}
	}
	_, err := o.s.newThread(ctx, tid, map[string]any{isolation.OwnerKey: owner})
	if errors.Is(err, threads.ErrThreadExists) {
		return o.ThreadOwner(ctx, tid)
	}
	if err != nil {
		return nil, fmt.Errorf("create thread %q: %w", tid, err)
	}
	return owner, nil
}
