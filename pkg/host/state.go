package host

import (
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
)

// threadStateBody is the native state response. Fields are in contract order.
type threadStateBody struct {
	Values   any            `json:"values"`
	Next     []string       `json:"next"`
	Metadata map[string]any `json:"metadata"`
}

// serveState answers GET graphs/<name>/threads/{thread_id}/state. No lock is taken. The state
// is counted against the caller's share of the response budget from before it is read to the
// end of its write (respond.go).
func (a *GraphHostApp) serveState(w http.ResponseWriter, r *http.Request, g *hostedGraph) {
	body, hold, err := a.threadState(r, g)
	defer hold.Release()
	if err == nil {
		err = writeHeldBody(w, hold, http.StatusOK, "application/json", body)
	}
	if err != nil {
		writeError(w, err)
	}
}

// threadState reads and encodes thread state, holding a reservation of the caller's share of
// the response budget from before the read (returned, to release, even with an error).
func (a *GraphHostApp) threadState(r *http.Request, g *hostedGraph) (body []byte, hold *respbudget.Hold, err error) {
	body, err = a.readThreadState(r, g, &hold)
	return body, hold, err
}

func (a *GraphHostApp) readThreadState(r *http.Request, g *hostedGraph, hold **respbudget.Hold) ([]byte, error) {
	sc := a.scope.Load()
	caller, err := sc.resolve(r)
	if err != nil {
		return nil, err
	}
	tid := r.PathValue("thread_id")
	if tid == "" {
		return nil, apierror.New(apierror.ErrBadRequest, "Missing thread_id in URL path")
	}
	if err := ValidateThreadID(tid); err != nil {
		return nil, err
	}
	if sc != nil {
		if err := a.checkThread(r.Context(), sc, caller, g, tid, false); err != nil {
			return nil, err
		}
	}
	sg, ok := g.graph.(StatefulGraph)
	if !ok { // unreachable over HTTP: the route exists only for stateful graphs
		return nil, apierror.Newf(errNotSupported, "Graph %s does not support state retrieval", pyRepr(g.name))
	}
	*hold = new(respbudget.Hold) // a load slot and a reservation, before the state is read
	if err := a.responses().HoldLoad(r.Context(), *hold, budgetOwner(caller), respbudget.LoadEstimate); err != nil {
		return nil, err
	}
	var view StateView
	err = guard(func() error {
		var err error
		view, err = sg.GetState(r.Context(), tid)
		return err
	})
	if errors.Is(err, ErrThreadNotFound) {
		return nil, apierror.Newf(apierror.ErrNotFound, "Thread %s not found", pyRepr(tid))
	}
	internal := apierror.New(apierror.ErrInternal, "Internal error while retrieving thread state")
	if err != nil {
		a.logger.Error("get thread state", "graph", g.name, "thread_id", tid, "error", err)
		return nil, internal
	}
	body, err := encodeState(view)
	if err != nil {
		a.logger.Error("encode thread state", "graph", g.name, "thread_id", tid, "error", err)
		return nil, internal
	}
	return body, nil
}

// encodeState renders a StateView as `{"values": ..., "next": [...], "metadata": ...}` in the
// json.dumps style: values that are not an object become {}, empty metadata null.
func encodeState(view StateView) ([]byte, error) {
	values, err := marshalCompact(view.Values)
	if err != nil {
		return nil, err
	}
	if !isJSONObject(values) {
		values = []byte("{}")
	}
	body := threadStateBody{Values: rawJSON(values), Next: view.Next, Metadata: view.Metadata}
	if body.Next == nil {
		body.Next = []string{}
	}
	if len(body.Metadata) == 0 {
		body.Metadata = nil
	}
	return marshalDumps(body)
}

// rawJSON keeps already-encoded JSON in place inside a larger value.
func rawJSON(b []byte) any { return jsonRaw(b) }

type jsonRaw []byte

func (r jsonRaw) MarshalJSON() ([]byte, error) { return r, nil }
