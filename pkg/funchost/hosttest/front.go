package hosttest

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// serveFront is the host's HTTP pipeline: limits, routing in name order, keys, then forwarding
// or a JSON invocation.
func (e *Emulator) serveFront(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RequestURI()) > funchost.MaxURLBytes {
		w.WriteHeader(http.StatusRequestURITooLong)
		return
	}
	rest, ok := funchost.StripRoutePrefix(r.URL.EscapedPath(), e.cfg.RoutePrefix)
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	f, params := matchRoute(e.routes, r.Method, rest)
	if f == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	level := e.callerLevel(r, f)
	if f.Disabled && level != funchost.KeyLevelAdmin {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if !authorized(f.Auth, level) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.ContentLength > e.maxBody {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, e.maxBody)
	if (e.cfg.Forwarding || e.cfg.Proxying) && f.httpInOut() {
		e.forward(w, r)
		return
	}
	e.invokeHTTP(w, r, f, params, level)
}

// callerLevel is the level the host grants the request: Admin for everything in bypass mode;
// otherwise the level of the presented key (the x-functions-key header first, else the first
// `code` query value).
func (e *Emulator) callerLevel(r *http.Request, f *function) funchost.KeyLevel {
	if e.opts.AuthMode == AuthBypass {
		return funchost.KeyLevelAdmin
	}
	return e.opts.Keys.Level(f.Name, funchost.PresentedKey(r))
}

// authorized applies the host's rule: anonymous always passes (even with a wrong key); Admin
// passes everything; otherwise the caller's level must equal the required level.
func authorized(required funchost.AuthLevel, level funchost.KeyLevel) bool {
	switch {
	case required == funchost.AuthAnonymous, level == funchost.KeyLevelAdmin:
		return true
	case required == funchost.AuthFunction:
		return level == funchost.KeyLevelFunction
	}
	return false
}

// forward sends the original request to the handler at its original path and query, with all
// headers plus the host headers and the body only when Content-Length > 0, and returns the
// answer verbatim without following redirects.
func (e *Emulator) forward(w http.ResponseWriter, r *http.Request) {
	var body io.Reader
	if r.ContentLength > 0 {
		body = r.Body
	}
	// functionTimeout covers the wait for the handler's response headers.
	resp, err := guarded(e, r.Context(), r.URL.Path, func(ctx context.Context, base string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, r.Method, base+r.URL.RequestURI(), body)
		if err != nil {
			return nil, err
		}
		for k, vs := range r.Header {
			req.Header[k] = append([]string(nil), vs...)
		}
		if r.ContentLength > 0 {
			req.ContentLength = r.ContentLength
		}
		req.Host = r.Host
		setHostHeaders(req.Header, newGUID())
		return e.forwarder.Do(req)
	}, func(late *http.Response) { _ = late.Body.Close() })
	if err != nil {
		e.logf("hosttest: forward %s %s: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	if _, ok := resp.Header["Content-Type"]; !ok {
		w.Header()["Content-Type"] = nil // verbatim: no sniffing
	}
	w.WriteHeader(resp.StatusCode)
	flusher := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = flusher.Flush() // proxying streams; forwarding tolerates it
		}
		if err != nil {
			return
		}
	}
}

// setHostHeaders adds the three headers the host sends on every call to the handler.
func setHostHeaders(h http.Header, invocationID string) {
	h.Set("X-Azure-Functions-InvocationId", invocationID)
	h.Set("X-Azure-Functions-HostVersion", HostVersion)
	h.Set("User-Agent", "Azure-Functions-Host/"+HostVersion)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
