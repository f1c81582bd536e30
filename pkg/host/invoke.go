package host

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/waitbound"
)

// serveInvoke answers POST graphs/<name>/invoke. The graph runs on the request's goroutine
// when the response can be sent before the handler returns (waitbound.CanReplyEarly: the
// custom handler's capture, any flushing writer), else in a goroutine of its own; past
// Options.MaxWait the request is answered 504 and the run goes on (waitExceeded).
func (a *GraphHostApp) serveInvoke(w http.ResponseWriter, r *http.Request, g *hostedGraph) {
	iv := &invokeCall{a: a, g: g, rc: a.newRunContext(r, g, EndpointInvoke)}
	defer iv.adm.free() // its answer's count, once written
	if err := a.admit(r, g, invokeRequestKind, &iv.rc, &iv.adm); err != nil {
		a.observer.rejected(r.Context(), &iv.rc, rejectReason(err))
		writeError(w, err)
		return
	}
	a.observer.started(r.Context(), &iv.rc)
	iv.runID, iv.invocationID = iv.rc.RunID, iv.rc.InvocationID
	if waitbound.CanReplyEarly(w) {
		iv.w = w
		if !waitbound.RunInline(r.Context(), a.opts.MaxWait, iv) {
			return // Bounded answered
		}
	} else if !waitbound.RunWork(r.Context(), a.opts.MaxWait, iv) {
		a.waitExceeded(w, g, iv.runID, iv.invocationID)
		return
	}
	if iv.err == nil {
		iv.adm.hold.Add(int64(len(iv.body))) // the run is done: its answer is sent, counted
		writeBody(w, http.StatusOK, "application/json", iv.body)
		putOutput(iv.out, iv.body) // written: the response keeps no slice of it
		return
	}
	if pub := clientError(iv.err); pub != nil {
		writeError(w, pub)
		return
	}
	writeError(w, apierror.GraphFailed)
}

// invokeCall is one invoke's run, in one allocation: what the run needs, its admission
// included, and what it leaves for the request (read only when waitbound.RunWork returned
// true).
type invokeCall struct {
	a    *GraphHostApp
	g    *hostedGraph
	adm  admission
	rc   RunContext
	body []byte
	err  error
	out  *[]byte // body's buffer, from outputBuffers

	// w is the request's writer when the run is inline (Bounded answers on it); runID and
	// invocationID are the run's, for the answer past the bound.
	w                   http.ResponseWriter
	runID, invocationID string
}

// Work runs the graph, frees the admission and tells the observer how the run ended.
func (iv *invokeCall) Work(ctx context.Context) {
	iv.out = outputBuffers.Get().(*[]byte)
	iv.body, iv.err = iv.a.runInvoke(ctx, iv.g, &iv.adm, (*iv.out)[:0])
	iv.a.release(iv.g, &iv.adm)
	iv.a.endInvoke(ctx, iv.g, &iv.rc, iv.err)
}

// Bounded answers the request of an inline run that passed Options.MaxWait: the 504 of
// waitExceeded, sent at once while the run goes on.
func (iv *invokeCall) Bounded() {
	status, body := iv.a.waitExceededReply(iv.g, iv.runID, iv.invocationID)
	waitbound.ReplyEarly(iv.w, status, http.Header{"Content-Type": {"application/json"}}, body)
}

// endInvoke tells the observer (and the log) how an invoke run ended.
func (a *GraphHostApp) endInvoke(ctx context.Context, g *hostedGraph, rc *RunContext, err error) {
	switch {
	case err == nil:
		a.observer.completed(ctx, rc)
	case clientError(err) != nil:
		a.observer.failed(ctx, rc, err)
	default:
		a.logger.Error("graph execution failed", "graph", g.name, "run_id", rc.RunID,
			"invocation_id", rc.InvocationID, "error", err)
		a.observer.failed(ctx, rc, err)
	}
}

// runInvoke runs the graph and appends the success body `{"output": ...}` to dst.
func (a *GraphHostApp) runInvoke(ctx context.Context, g *hostedGraph, adm *admission, dst []byte) ([]byte, error) {
	if adm.locked { // unlocked, ctx is waitbound.Run's, cancelled as soon as the run returns
		var cancel context.CancelFunc
		ctx, cancel = a.runContext(ctx, g, adm)
		defer cancel()
	}
	var out any
	err := guard(func() error {
		var err error
		if ri, ok := g.graph.(requestInvoker); ok {
			out, err = ri.invokeRequest(ctx, &adm.req.Request)
		} else {
			out, err = g.graph.Invoke(ctx, adm.req.Request)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return appendOutput(dst, out)
}

// outputBuffers holds the buffers invoke replies are encoded into (runInvoke), each back once
// its reply is written (putOutput).
var outputBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 256)
	return &b
}}

// maxPooledOutput keeps unusually large replies' buffers out of outputBuffers.
const maxPooledOutput = 64 << 10

// putOutput returns buf to outputBuffers with body, the reply it now holds, as its storage.
func putOutput(buf *[]byte, body []byte) {
	if cap(body) > maxPooledOutput {
		return
	}
	*buf = body[:0]
	outputBuffers.Put(buf)
}

// appendOutput appends `{"output":<out>}` to dst (empty) in the compact style: an object
// output as is, any other output as {"result":"<text>"}, where text is the string itself or
// the compact JSON.
func appendOutput(dst []byte, out any) ([]byte, error) {
	body := append(dst, `{"output":`...)
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
