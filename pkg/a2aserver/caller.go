package a2aserver

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// Under isolation (Options.Isolation) a task is its caller's run, exactly as on the runs API:
// a run started here records the caller's identity in its metadata under "owner", a task of
// another identity answers TaskNotFound (read, send, cancel, subscribe), and ListTasks reads
// the caller's runs only (engine.RunQuery.Owner). The master key is an admin: it sees every
// task. Without isolation every caller is an admin.

// resolveCaller returns the request's caller, or the HTTP status and error of a request
// whose caller cannot be resolved (401 none, 403 untrusted identity header, 400 invalid).
func (s *Server) resolveCaller(r *http.Request) (isolation.Caller, int, *Error) {
	if s.opts.Isolation == nil {
		return isolation.Caller{Admin: true}, 0, nil
	}
	c, err := s.opts.Isolation.Caller(r)
	switch {
	case errors.Is(err, isolation.ErrUntrustedIdentity):
		return c, http.StatusForbidden, rpcErr(CodeInvalidRequest, "forbidden: the identity header is only accepted from a trusted proxy")
	case errors.Is(err, isolation.ErrInvalidIdentity):
		return c, http.StatusBadRequest, rpcErr(CodeInvalidRequest, "bad request: the caller identity is not valid")
	case err != nil:
		return c, http.StatusUnauthorized, rpcErr(CodeInvalidRequest, "unauthorized: the request carries no caller identity")
	}
	return c, 0, nil
}

// owns reports whether c may see run.
func owns(c isolation.Caller, run engine.Run) bool {
	if c.Admin {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(run.Input.Metadata, &m) != nil {
		return false
	}
	var owner string
	if json.Unmarshal(m[isolation.OwnerKey], &owner) != nil {
		return false
	}
	return c.Owns(owner)
}

// ownerMetadata is the metadata a new task's run is started with.
func ownerMetadata(c isolation.Caller) json.RawMessage {
	m := map[string]string{"a2a": "task"}
	if !c.Admin {
		m[isolation.OwnerKey] = c.ID
	}
	b, _ := json.Marshal(m)
	return b
}
