package funchost

import (
	"net/http"
	"slices"
	"strings"
)

// router matches requests against HTTP functions in host order.
type router struct {
	entries []*httpEntry
}

func newRouter(es []*httpEntry) *router { return &router{entries: sortedEntries(es)} }

// match returns the first entry whose route and method match, with its route values.
func (r *router) match(method, path string) (*httpEntry, map[string]*string) {
	method = strings.ToUpper(method)
	for _, e := range r.entries {
		if len(e.methods) > 0 && !slices.Contains(e.methods, method) {
			continue
		}
		if values, ok := e.template.Match(path); ok {
			return e, values
		}
	}
	return nil, nil
}

// route finds the function serving r under the route prefix and sets r's path values; nil
// means no route matched (the host's 404).
func (r *router) route(req *http.Request, prefix string) *httpEntry {
	rest, ok := stripPrefix(req.URL.EscapedPath(), prefix)
	if !ok {
		return nil
	}
	e, values := r.match(req.Method, rest)
	if e == nil {
		return nil
	}
	for k, v := range values {
		if v != nil {
			req.SetPathValue(k, *v)
		}
	}
	return e
}

// stripPrefix removes the route prefix (case-insensitive) from a request path.
func stripPrefix(path, prefix string) (string, bool) {
	path = strings.TrimPrefix(path, "/")
	if prefix == "" {
		return path, true
	}
	if len(path) < len(prefix) || !strings.EqualFold(path[:len(prefix)], prefix) {
		return "", false
	}
	rest := path[len(prefix):]
	if rest != "" && rest[0] != '/' {
		return "", false
	}
	return strings.TrimPrefix(rest, "/"), true
}
