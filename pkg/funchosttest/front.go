package funchosttest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
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
	// Authorization runs before the disabled-function check: a disabled function-level route
	// called without a key answers 401, not 404.
	level, _ := e.callerKey(r, f)
	if !authorized(f.Auth, level) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if f.Disabled && level != funchost.KeyLevelAdmin {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if r.ContentLength > e.maxBody {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	// A copy: replacing the body of net/http's own request would hide its 100-continue
	// handling.
	r = r.WithContext(r.Context())
	r.Body = http.MaxBytesReader(w, r.Body, e.maxBody)
	switch {
	case e.cfg.Proxying && f.httpInOut(): // proxying wins over forwarding
		e.proxy(w, r, f)
		return
	case e.cfg.Forwarding && f.httpInOut():
		e.forward(w, r, f)
		return
	}
	e.invokeHTTP(w, r, f, params)
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

// forwardURI is where the host sends a forwarded request: the original path (the function
// name for the legacy httpWorker section) and the query rebuilt from the host's query
// dictionary (repeated names comma-joined, names and values percent-encoded).
func (e *Emulator) forwardURI(r *http.Request, f *function) string {
	path := r.URL.EscapedPath()
	if e.cfg.Legacy {
		path = "/" + f.Name
	}
	var q strings.Builder
	for _, p := range hostQuery(r.URL.RawQuery) {
		if q.Len() == 0 {
			q.WriteByte('?')
		} else {
			q.WriteByte('&')
		}
		q.WriteString(escapeDataString(p.name) + "=" + escapeDataString(p.value))
	}
	return path + q.String()
}

type queryParam struct{ name, value string }

// hostQuery parses a raw query as ASP.NET Core does for the host's query dictionary: names
// compare case-insensitively (the first spelling stays), repeated values are comma-joined, in
// order of first appearance; a part that does not decode is skipped.
func hostQuery(raw string) []queryParam {
	var out []queryParam
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		n, v, _ := strings.Cut(part, "=")
		name, err1 := url.QueryUnescape(n)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		i := slices.IndexFunc(out, func(p queryParam) bool { return strings.EqualFold(p.name, name) })
		if i < 0 {
			out = append(out, queryParam{name, value})
			continue
		}
		out[i].value += "," + value
	}
	return out
}

// escapeDataString percent-encodes everything but the unreserved characters, as .NET's
// UrlEncoder does.
func escapeDataString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// forward sends the original request to the handler at forwardURI, with all headers plus the
// host headers and the body only when Content-Length > 0, and returns the answer verbatim
// without following redirects. The host reads the whole answer before it starts the
// caller's response (HttpClient's ResponseContentRead), so nothing streams: the caller gets
// the response once the handler has finished it, within functionTimeout. The caller going
// away does not cancel a forwarded request.
func (e *Emulator) forward(w http.ResponseWriter, r *http.Request, f *function) {
	var body io.Reader
	if r.ContentLength > 0 {
		body = r.Body
	}
	type answer struct {
		resp *http.Response
		body []byte
	}
	ctx := context.WithoutCancel(r.Context()) // forwarding: sent without the caller's cancellation
	a, err := guarded(e, ctx, r.URL.Path, func(ctx context.Context, base string) (answer, error) {
		req, err := http.NewRequestWithContext(ctx, r.Method, base+e.forwardURI(r, f), body)
		if err != nil {
			return answer{}, err
		}
		for k, vs := range r.Header {
			req.Header[k] = append([]string(nil), vs...)
		}
		if r.ContentLength > 0 {
			req.ContentLength = r.ContentLength
		}
		req.Host = r.Host
		setHostHeaders(req.Header, newGUID())
		resp, err := e.forwarder.Do(req)
		if err != nil {
			return answer{}, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return answer{}, err
		}
		return answer{resp, data}, nil
	}, nil)
	if err != nil {
		e.logf("funchosttest: forward %s %s: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	copyResponseHeader(w.Header(), a.resp.Header)
	w.WriteHeader(a.resp.StatusCode)
	_, _ = w.Write(a.body)
}

// copyResponseHeader copies a handler's response headers to the caller's response, adding
// none: without a Content-Type from the handler the caller gets none either (no sniffing).
func copyResponseHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = vs
	}
	if _, ok := src["Content-Type"]; !ok {
		dst["Content-Type"] = nil
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
