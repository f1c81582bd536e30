package funchost

import (
	"log/slog"
	"net/http"

	"github.com/google/uuid"
)

// Host limits the standalone server enforces like the Functions host.
const (
	// MaxURLBytes is the host's URL length limit.
	MaxURLBytes = 4096
	// DefaultMaxRequestBodyBytes is the host's request body limit (100 MB).
	DefaultMaxRequestBodyBytes = 104857600
)

// StandaloneOptions configures the standalone server.
type StandaloneOptions struct {
	// Keys are checked like the host does. With no keys every non-anonymous route answers 401.
	Keys Keys
	// Logger receives recovered panics; nil means slog.Default().
	Logger *slog.Logger
	// MaxRequestBodyBytes caps request bodies (413 above it); 0 means the host's 100 MB.
	MaxRequestBodyBytes int64
}

// Standalone returns a server that serves the app's HTTP functions directly under
// `/{routePrefix}/{route}`, without the Functions host: routing in host order (first match
// wins, a method mismatch falls through, no match is 404 with an empty body) and key checks as
// the host does them (401 with an empty body). A Content-Length over MaxRequestBodyBytes answers
// 413 with a JSON error body before the handler runs; a streamed body is cut at the cap.
// Serve it with a Server (NewServer, Serve) for the timeouts and limits of ServerConfig.
func (a *FunctionApp) Standalone(opts StandaloneOptions) http.Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	maxBody := opts.MaxRequestBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxRequestBodyBytes
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return &standalone{prefix: a.routePrefix, router: newRouter(a.http), keys: opts.Keys, logger: logger, maxBody: maxBody}
}

type standalone struct {
	prefix  string
	router  *router
	keys    Keys
	logger  *slog.Logger
	maxBody int64
}

func (s *standalone) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RequestURI()) > MaxURLBytes {
		w.WriteHeader(http.StatusRequestURITooLong)
		return
	}
	e := s.router.route(r, s.prefix)
	if e == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	ok, lvl := s.keys.authorize(r, e.fn.Name, e.fn.AuthLevel)
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.ContentLength > s.maxBody {
		WriteBodyError(w, &BodyError{Kind: ErrBodyTooLarge, Limit: s.maxBody, Size: r.ContentLength})
		return
	}
	// A copy: replacing the body of net/http's own request would hide its 100-continue
	// handling, and a rejected `Expect: 100-continue` request would hang.
	r = r.WithContext(r.Context())
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	id := invocationIDHeader(r.Header)
	if id == "" {
		id = uuid.NewString()
	}
	r = r.WithContext(withStandaloneInvocation(r.Context(), id, lvl.public()))
	serveFunction(e, w, r, func() *slog.Logger {
		return s.logger.With("function", e.fn.Name, "invocation_id", id)
	})
}
