package runsapi

import (
	"net/http"
	"net/url"
	"strings"
)

// requestBase returns the scheme and host of the incoming request as the caller used them:
// the scheme from X-Forwarded-Proto (set by the Azure front end) when it is http or https,
// else from the URL the Functions host passed on, else from TLS; the host from the Host
// header.
func requestBase(r *http.Request) string {
	scheme := "http"
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	switch proto = strings.ToLower(strings.TrimSpace(proto)); {
	case proto == "http" || proto == "https":
		scheme = proto
	case r.URL.Scheme == "http" || r.URL.Scheme == "https":
		scheme = r.URL.Scheme
	case r.TLS != nil:
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	return scheme + "://" + host
}

// runURL returns the absolute URL of GET /{prefix}/runs/{id} for the request's base.
func (s *Service) runURL(r *http.Request, id string) string {
	path := "/runs/" + url.PathEscape(id)
	if p := strings.Trim(s.opts.RoutePrefix, "/"); p != "" {
		path = "/" + p + path
	}
	return requestBase(r) + path
}
