package funchost

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// CrossSiteMessage is the detail of the 403 that refuses a browser's cross-site request to
// change state (see serveFunction).
const CrossSiteMessage = "Forbidden: cross-site request"

// A browser sends a "simple" cross-origin request (a form post, a text/plain fetch) without
// asking first, with whatever credentials it holds for the target: a cookie of App Service
// Authentication or of an authenticating proxy, a key in the URL. CORS only stops the page
// from reading the answer, not the request from acting. So every route of every surface
// refuses, before its handler runs, a request with an unsafe method (anything but GET, HEAD,
// OPTIONS) that a browser marks as cross-site:
//
//   - Sec-Fetch-Site other than same-origin or none (cross-site, and same-site: a sibling
//     subdomain is another application, maybe another tenant's), or, from a browser that
//     sends no Sec-Fetch-Site,
//   - an Origin whose host and port are not the request's own Host (the trigger's URL under
//     the Functions host). The scheme is not compared: where TLS ends in front of the server
//     it cannot know the one the browser used, and every browser that sends Origin without
//     Sec-Fetch-Site predates 2023.
//
// A request without either header (curl, a server, an SDK outside a browser) passes, as does
// a request whose Origin is one of ServerConfig.AllowedOrigins. The checks are the standard
// library's http.CrossOriginProtection; docs/README.md (common rules) says how they meet the
// CORS rules of the Functions host.

// noOrigins is the check with no allowed origin, for a request served by a server that
// allows none (or by one that is not a Server of this package).
var noOrigins = http.NewCrossOriginProtection()

// originsKey is the context key of the check a Server hands the routing layer.
type originsKey struct{}

// withOrigins returns ctx carrying the cross-origin check p.
func withOrigins(ctx context.Context, p *http.CrossOriginProtection) context.Context {
	return context.WithValue(ctx, originsKey{}, p)
}

// originsOf returns the cross-origin check of the request being served.
func originsOf(ctx context.Context) *http.CrossOriginProtection {
	if p, ok := ctx.Value(originsKey{}).(*http.CrossOriginProtection); ok {
		return p
	}
	return noOrigins
}

// newOrigins returns the check that lets the browser origins allowed through; nil when none
// is (the default check applies).
func newOrigins(allowed []string) (*http.CrossOriginProtection, error) {
	if len(allowed) == 0 {
		return nil, nil
	}
	p := http.NewCrossOriginProtection()
	for _, o := range allowed {
		n, err := normalizeOrigin(o)
		if err == nil {
			err = p.AddTrustedOrigin(n)
		}
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: want scheme://host[:port], as a browser sends it in Origin", o)
		}
	}
	return p, nil
}

// normalizeOrigin writes an origin as a browser serialises it in the Origin header: scheme
// and host in lower case, no default port, no trailing slash.
func normalizeOrigin(o string) (string, error) {
	o = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(o), "/"))
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", fmt.Errorf("not an origin")
	}
	if (u.Scheme == "https" && u.Port() == "443") || (u.Scheme == "http" && u.Port() == "80") {
		o = u.Scheme + "://" + u.Hostname()
		if strings.Contains(u.Hostname(), ":") {
			o = u.Scheme + "://[" + u.Hostname() + "]"
		}
	}
	return o, nil
}

// serveFunction serves r with function e's handler, after the check every route shares: a
// browser's cross-site request that may change state is answered 403 in the hosting shape
// ({"error":"error","detail":"Forbidden: cross-site request"}) and never reaches the handler.
// Every way a request reaches a function goes through here: a JSON invocation, a forwarded
// request, the standalone server.
func serveFunction(e *httpEntry, w http.ResponseWriter, r *http.Request, logger func() *slog.Logger) {
	if err := originsOf(r.Context()).Check(r); err != nil {
		apierror.Hosting.Write(w, apierror.New(apierror.ErrForbidden, CrossSiteMessage))
		return
	}
	serveRecovered(e.fn.Handler, w, r, logger)
}
