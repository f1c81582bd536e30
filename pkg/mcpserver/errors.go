package mcpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// JSON-RPC error codes of the answers this package writes itself.
const (
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
)

// rpcError is a JSON-RPC error response without an id: what the transport answers before it
// read a request.
type rpcError struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeError answers status with a JSON-RPC error body.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	e := rpcError{JSONRPC: "2.0"}
	e.Error.Code, e.Error.Message = code, msg
	body, _ := json.Marshal(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeCallerError answers a caller isolation refuses, with the runs API's status and words.
func writeCallerError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, isolation.ErrUntrustedIdentity):
		writeError(w, http.StatusForbidden, codeInvalidRequest, "forbidden: the identity header is only accepted from a trusted proxy")
	case errors.Is(err, isolation.ErrInvalidIdentity):
		writeError(w, http.StatusBadRequest, codeInvalidRequest, "bad request: the caller identity must be at most 512 bytes of UTF-8 without control characters or whitespace other than spaces")
	default:
		writeError(w, http.StatusUnauthorized, codeInvalidRequest, "unauthorized: the request carries no caller identity")
	}
}

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

// runURL returns the absolute URL of GET /{prefix}/runs/{id} for a request's base.
func runURL(base, prefix, id string) string {
	path := "/runs/" + url.PathEscape(id)
	if p := strings.Trim(prefix, "/"); p != "" {
		path = "/" + p + path
	}
	return base + path
}
