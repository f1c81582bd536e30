package host

import (
	"encoding/json"
	"net/http"
)

// serveInvoke answers POST graphs/<name>/invoke.
func (a *GraphHostApp) serveInvoke(w http.ResponseWriter, r *http.Request, g *hostedGraph) {
	rc := a.newRunContext(r, g, EndpointInvoke)
	adm, err := a.admit(r, g, invokeRequestKind, &rc)
	if err != nil {
		a.observer.rejected(r.Context(), &rc, rejectReason(err))
		writeError(w, err, a.logger)
		return
	}
	a.observer.started(r.Context(), &rc)
	body, err := a.runInvoke(r, g, adm)
	a.release(g, adm)
	if pub := clientError(err); pub != nil {
		a.observer.failed(r.Context(), &rc, err)
		writeError(w, pub, a.logger)
		return
	}
	if err != nil {
		a.logger.Error("graph execution failed", "graph", g.name, "run_id", rc.RunID,
			"invocation_id", rc.InvocationID, "error", err)
		a.observer.failed(r.Context(), &rc, err)
		writeError(w, &publicError{kind: errGraphFailed, msg: "Graph execution failed"}, a.logger)
		return
	}
	a.observer.completed(r.Context(), &rc)
	writeBody(w, http.StatusOK, "application/json", body)
}

// runInvoke runs the graph and encodes the success body `{"output": ...}`.
func (a *GraphHostApp) runInvoke(r *http.Request, g *hostedGraph, adm *admission) ([]byte, error) {
	ctx, cancel := a.runContext(r.Context(), g, adm)
	defer cancel()
	var out any
	err := guard(func() error {
		var err error
		out, err = g.graph.Invoke(ctx, adm.req.Request)
		return err
	})
	if err != nil {
		return nil, err
	}
	return encodeOutput(out)
}

// encodeOutput returns `{"output":<out>}` in the compact style: an object output as is, any
// other output as {"result":"<text>"}, where text is the string itself or the compact JSON.
func encodeOutput(out any) ([]byte, error) {
	body := make([]byte, 0, 256)
	body = append(body, `{"output":`...)
	start := len(body)
	body, err := appendCompact(body, out)
	if err != nil {
		return nil, err
	}
	if !isJSONObject(body[start:]) {
		text := textOf(out, body[start:])
		body, err = appendCompact(body[:start], resultWrapper{Result: text})
		if err != nil {
			return nil, err
		}
	}
	return append(body, '}'), nil
}

type resultWrapper struct {
	Result string `json:"result"`
}

// textOf returns the string form of a non-object value: the string itself, or its JSON text.
func textOf(v any, encoded []byte) string {
	switch s := v.(type) {
	case string:
		return s
	case json.RawMessage:
		var str string
		if json.Unmarshal(s, &str) == nil {
			return str
		}
	}
	if len(encoded) > 0 && encoded[0] == '"' {
		var str string
		if json.Unmarshal(encoded, &str) == nil {
			return str
		}
	}
	return string(encoded)
}
