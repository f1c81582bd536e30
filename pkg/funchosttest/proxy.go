package funchosttest

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"time"
)

// proxyCorrelationHeader is the header the host adds to a proxied request with the invocation
// id, unless the caller sent one (ScriptConstants.HttpProxyCorrelationHeader).
const proxyCorrelationHeader = "X-Ms-Invocation-Id"

// hopByHopHeaders are the request headers the host's proxy (YARP) does not pass on, besides
// Host and the headers the Connection header names.
var hopByHopHeaders = []string{
	"Connection", "Transfer-Encoding", "Keep-Alive", "Upgrade", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authentication-Info", "Proxy-Authorization", "Proxy-Features", "Proxy-Instruction", "Security-Scheme",
	"Alpn", "Close", "Http2-Settings", "Te", "Alt-Svc",
}

// proxy passes the caller's own request to the handler as the host does with
// enableProxyingHttpRequest (DefaultHttpWorkerService.ProxyInvocationRequest through YARP's
// default transforms): the original method, path and query; every header but the hop-by-hop
// ones and Host (the handler sees its own address, and X-Forwarded-Host the caller's Host);
// X-Forwarded-For, -Proto and -Host set from the caller's connection (any the caller sent
// replaced, X-Forwarded-Prefix dropped); X-Azure-Functions-InvocationId and -HostVersion
// overwritten, User-Agent left as the caller's, x-ms-invocation-id added unless present; the
// body whenever there is one, chunked included. The answer streams back as the handler writes
// it (status and headers verbatim, each read flushed), redirects not followed, and the request
// ends with its caller. The invocation lasts until the whole answer is sent, so
// functionTimeout bounds the stream: past it the invocation fails, and if the answer is still
// going timeoutGracePeriod later the handler is killed and restarted and the caller's
// response is cut (its connection aborted, as a proxy does once the response has started).
func (e *Emulator) proxy(w http.ResponseWriter, r *http.Request, f *function) {
	wk, err := e.current()
	if err != nil {
		e.logf("funchosttest: proxy %s %s: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var body io.Reader
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		body = r.Body
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, wk.url+r.URL.RequestURI(), body)
	if err != nil {
		e.logf("funchosttest: proxy %s %s: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	req.ContentLength = r.ContentLength
	req.Header = proxiedHeader(r)
	req.Header.Set("X-Azure-Functions-InvocationId", newGUID())
	req.Header.Set("X-Azure-Functions-HostVersion", HostVersion)
	if _, ok := req.Header[proxyCorrelationHeader]; !ok {
		req.Header.Set(proxyCorrelationHeader, req.Header.Get("X-Azure-Functions-InvocationId"))
	}

	stop := e.watchInvocation(wk, f.Name)
	defer stop()
	resp, err := e.proxier.Do(req)
	if err != nil {
		e.logf("funchosttest: proxy %s %s: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	defer resp.Body.Close()
	copyResponseHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // the caller left
			}
			_ = rc.Flush()
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			if r.Context().Err() != nil {
				return // the caller left
			}
			// The handler's answer broke off (killed, reset): the caller's response is cut,
			// not ended cleanly.
			e.logf("funchosttest: proxy %s %s: the handler's response broke off: %v", r.Method, r.URL.Path, err)
			panic(http.ErrAbortHandler)
		}
	}
}

// proxiedHeader is the caller's request header as the host's proxy passes it on.
func proxiedHeader(r *http.Request) http.Header {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopByHopHeaders {
		h.Del(name)
	}
	client := r.RemoteAddr
	if host, _, err := net.SplitHostPort(client); err == nil {
		client = host
	}
	h.Del("X-Forwarded-Prefix")
	h[textproto.CanonicalMIMEHeaderKey("X-Forwarded-For")] = []string{client}
	h[textproto.CanonicalMIMEHeaderKey("X-Forwarded-Proto")] = []string{"http"}
	h[textproto.CanonicalMIMEHeaderKey("X-Forwarded-Host")] = []string{r.Host}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // none of the proxy's own either
	}
	return h
}

// watchInvocation applies functionTimeout to an invocation that runs on handler wk until the
// returned stop is called: past the limit the invocation has failed (logged as the host logs
// it); if it is still running timeoutGracePeriod later, the handler is killed and restarted.
func (e *Emulator) watchInvocation(wk *worker, function string) (stop func()) {
	limit := e.cfg.EffectiveFunctionTimeout()
	if limit <= 0 {
		return func() {}
	}
	var mu sync.Mutex
	done := false
	var grace *time.Timer
	timer := time.AfterFunc(limit, func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		e.logf("funchosttest: Timeout value of %s was exceeded by function: Functions.%s", formatTimeSpan(limit), function)
		grace = time.AfterFunc(timeoutGracePeriod, func() {
			mu.Lock()
			finished := done
			mu.Unlock()
			if !finished {
				e.restart(wk, function)
			}
		})
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		done = true
		timer.Stop()
		if grace != nil {
			grace.Stop()
		}
	}
}

// proxyClient is the host's proxy's HTTP client: no redirects, no cookies, no decompression
// (nor an Accept-Encoding of its own), no overall timeout (functionTimeout bounds the
// invocation instead).
func proxyClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
