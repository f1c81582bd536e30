package launch

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// Per-user isolation settings (package isolation; docs/http-platform.md, "Per-user
// isolation"). Off by default.
const (
	// envUserIsolation turns per-user isolation on ("on") or off ("off", the default): with
	// it on, the platform's threads and the runs API's runs are scoped to the identity that
	// created them, and a request without an identity (nor the master key) answers 401.
	envUserIsolation = "FUNCGRAPH_USER_ISOLATION"
	// envIdentityHeader names the request header that carries the caller's identity on
	// `serve` (set by an authenticating proxy). Required with isolation on under `serve`;
	// ignored under the Functions host, where App Service Authentication's
	// X-MS-CLIENT-PRINCIPAL-ID is the identity.
	envIdentityHeader = "FUNCGRAPH_IDENTITY_HEADER"
	// envTrustedProxies lists the peers (comma-separated CIDR prefixes or addresses) whose
	// envIdentityHeader is believed; that header from any other peer answers 403. Required
	// with envIdentityHeader.
	envTrustedProxies = "FUNCGRAPH_TRUSTED_PROXIES"
)

// App Service settings read to check that App Service Authentication guards the identity
// headers under the Functions host.
const (
	envSiteName    = "WEBSITE_SITE_NAME"
	envAuthEnabled = "WEBSITE_AUTH_ENABLED"
)

// isolationFromEnv reads the isolation settings for mode: nil when off. Under the Functions
// host on Azure (WEBSITE_SITE_NAME set) it refuses to start unless App Service
// Authentication is on (WEBSITE_AUTH_ENABLED=true): only that strips client-sent
// X-MS-CLIENT-PRINCIPAL-* headers. Under `serve` it needs the identity header and the
// trusted proxies.
func isolationFromEnv(getenv func(string) string, mode Mode, logger *slog.Logger) (*isolation.Isolation, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv(envUserIsolation))); v {
	case "", "off", "false", "0":
		return nil, nil
	case "on", "true", "1":
	default:
		return nil, fmt.Errorf("%s: want on or off, got %q", envUserIsolation, getenv(envUserIsolation))
	}
	var cfg isolation.Config
	cfg.IdentityHeader = strings.TrimSpace(getenv(envIdentityHeader))
	proxies, err := isolation.ParseProxies(getenv(envTrustedProxies))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envTrustedProxies, err)
	}
	cfg.TrustedProxies = proxies
	switch mode {
	case ModeServe:
		if cfg.IdentityHeader == "" || len(proxies) == 0 {
			return nil, fmt.Errorf("%s=on under serve needs %s (the header your authenticating proxy sets) and %s (that proxy's addresses)",
				envUserIsolation, envIdentityHeader, envTrustedProxies)
		}
	case ModeCustomHandler:
		if getenv(envSiteName) != "" && !strings.EqualFold(strings.TrimSpace(getenv(envAuthEnabled)), "true") {
			return nil, fmt.Errorf("%s=on under the Functions host needs App Service Authentication (%s=True): without it a client can set X-MS-CLIENT-PRINCIPAL-ID itself",
				envUserIsolation, envAuthEnabled)
		}
		if getenv(envSiteName) == "" {
			logger.Warn("user isolation: not on Azure, so X-MS-CLIENT-PRINCIPAL-ID is trusted as the client sent it; use this for local testing only")
		}
	}
	iso, err := isolation.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envUserIsolation, err)
	}
	logger.Info("user isolation on: threads and runs are scoped to their owner")
	return iso, nil
}
