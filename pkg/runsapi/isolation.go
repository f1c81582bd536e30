package runsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Per-user isolation (Options.Isolation). Every run endpoint resolves its caller first (401
// without an identity, 403 for an identity header from an untrusted peer, 400 for an identity
// that cannot be used as sent). A run started by
// a non-admin records the caller's identity in its metadata under "owner" (whatever the
// client sent there); status, events, cancel, history and purge of another identity's run
// answer exactly as for a missing run (404), a listing reads the caller's runs only (the
// engine's owner index, engine.RunQuery.Owner, keyed by the metadata's "owner"), and a start
// may not take the id of another identity's run (409 instance already exists). An admin (the
// master key) sees every run and its metadata is kept as given. The graph versions route
// counts every identity's unfinished runs, an operator's figure, so it is the master key's
// only: another caller gets 403. With isolation off no caller is resolved: every request is
// only marked as new work for the memory budget (isolate).

// Errors of the caller check, each answered as it is.
var (
	errNoCaller        = apierror.New(apierror.ErrUnauthorized, "unauthorized: the request carries no caller identity")
	errUntrustedCaller = apierror.New(apierror.ErrForbidden, "forbidden: the identity header is only accepted from a trusted proxy")
	errInvalidCaller   = apierror.New(apierror.ErrBadRequest, "bad request: the caller identity must be at most 512 bytes of UTF-8 without control characters or whitespace other than spaces")
	errAdminOnly       = apierror.New(apierror.ErrForbidden, "forbidden: under user isolation, graph versions are listed for the master key only")
)

type callerKey struct{}

// isolate wraps an endpoint with the caller check when isolation is on, and marks its
// context as the caller's new work (membudget.NewWork: what it stores in memory counts
// against the caller's identity, the master key's against none).
func (s *Service) isolate(fn func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	if s.opts.Isolation == nil {
		return func(w http.ResponseWriter, r *http.Request) error {
			return fn(w, r.WithContext(membudget.NewWork(r.Context(), "")))
		}
	}
	iso := s.opts.Isolation
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := iso.Caller(r)
		switch {
		case errors.Is(err, isolation.ErrUntrustedIdentity):
			return errUntrustedCaller
		case errors.Is(err, isolation.ErrInvalidIdentity):
			return errInvalidCaller
		case err != nil:
			return errNoCaller
		}
		owner := c.ID
		if c.Admin {
			owner = ""
		}
		ctx := membudget.NewWork(context.WithValue(r.Context(), callerKey{}, c), owner)
		return fn(w, r.WithContext(ctx))
	}
}

// caller returns the request's caller: an admin when isolation is off.
func (s *Service) caller(ctx context.Context) isolation.Caller {
	if s.opts.Isolation == nil {
		return isolation.Caller{Admin: true}
	}
	c, _ := ctx.Value(callerKey{}).(isolation.Caller) // missing: owns nothing
	return c
}

// owns reports whether the request's caller may see run.
func (s *Service) owns(ctx context.Context, run engine.Run) bool {
	if s.opts.Isolation == nil {
		return true
	}
	c := s.caller(ctx)
	return c.Admin || c.Owns(runOwner(run.Input.Metadata))
}

// runOwner returns the owner recorded in run metadata, or nil.
func runOwner(meta json.RawMessage) any {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return nil
	}
	var owner string
	if json.Unmarshal(m[isolation.OwnerKey], &owner) != nil {
		return nil
	}
	return owner
}

// ownedMetadata returns the metadata a non-admin caller's run is started with: meta (a JSON
// object, or empty) without any "owner" member, its other members in order, and "owner": the
// caller's identity last. An admin's is kept as given.
func (s *Service) ownedMetadata(ctx context.Context, meta json.RawMessage) (json.RawMessage, error) {
	c := s.caller(ctx)
	if c.Admin {
		return meta, nil
	}
	var out bytes.Buffer
	out.WriteByte('{')
	if len(bytes.TrimSpace(meta)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(meta))
		if _, err := dec.Token(); err != nil { // {
			return nil, errBodyNotObject
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, errBodyNotObject
			}
			key, _ := tok.(string)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, errBodyNotObject
			}
			if key == isolation.OwnerKey {
				continue
			}
			k, _ := json.Marshal(key)
			out.Write(k)
			out.WriteByte(':')
			out.Write(v)
			out.WriteByte(',')
		}
	}
	id, _ := json.Marshal(c.ID)
	out.WriteString(`"` + isolation.OwnerKey + `":`)
	out.Write(id)
	out.WriteByte('}')
	return out.Bytes(), nil
}
