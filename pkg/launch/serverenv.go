package launch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// Server settings (docs/limits.md, "Server timeouts and limits"; the allowed origins in
// docs/README.md, "Common rules"): durations in Go syntax (10s, 2m), sizes in bytes. Unset
// means the funchost default.
const (
	envReadHeaderTimeout = "FUNCGRAPH_READ_HEADER_TIMEOUT"
	envBodyReadTimeout   = "FUNCGRAPH_BODY_READ_TIMEOUT"
	envIdleTimeout       = "FUNCGRAPH_IDLE_TIMEOUT"
	envDrainTimeout      = "FUNCGRAPH_DRAIN_TIMEOUT"
	envShutdownTimeout   = "FUNCGRAPH_SHUTDOWN_TIMEOUT"
	envWriteStallTimeout = "FUNCGRAPH_WRITE_STALL_TIMEOUT"
	envMaxHeaderBytes    = "FUNCGRAPH_MAX_HEADER_BYTES"
	envDrainBodyBytes    = "FUNCGRAPH_DRAIN_BODY_BYTES"
	// envAllowedOrigins lists the browser origins (comma-separated) whose cross-site
	// requests may change state (funchost.ServerConfig.AllowedOrigins).
	envAllowedOrigins = "FUNCGRAPH_ALLOWED_ORIGINS"
	// envMaxConnections caps the connections `serve` holds open (connLimit).
	envMaxConnections = "FUNCGRAPH_MAX_CONNECTIONS"
	// envRequestBodyLimit is the Functions host's own request size setting, which the
	// standalone server and the custom handler honour too.
	envRequestBodyLimit = "FUNCTIONS_REQUEST_BODY_SIZE_LIMIT"
)

// serverConfigFromEnv reads the server settings and validates them.
func serverConfigFromEnv(getenv func(string) string) (funchost.ServerConfig, error) {
	var c funchost.ServerConfig
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{
		{envReadHeaderTimeout, &c.ReadHeaderTimeout}, {envBodyReadTimeout, &c.BodyReadTimeout},
		{envIdleTimeout, &c.IdleTimeout}, {envDrainTimeout, &c.DrainTimeout}, {envShutdownTimeout, &c.ShutdownTimeout},
		{envWriteStallTimeout, &c.WriteStallTimeout},
	} {
		if v := strings.TrimSpace(getenv(d.name)); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return c, fmt.Errorf("%s: want a positive duration such as 30s", d.name)
			}
			*d.dst = t
		}
	}
	if v := strings.TrimSpace(getenv(envMaxHeaderBytes)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return c, fmt.Errorf("%s: want a positive number of bytes", envMaxHeaderBytes)
		}
		c.MaxHeaderBytes = n
	}
	if v := strings.TrimSpace(getenv(envDrainBodyBytes)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, fmt.Errorf("%s: want a number of bytes", envDrainBodyBytes)
		}
		c.DrainBodyBytes = n
	}
	for o := range strings.SplitSeq(getenv(envAllowedOrigins), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	if err := (funchost.ServerConfig{AllowedOrigins: c.AllowedOrigins}).Validate(); err != nil {
		return c, fmt.Errorf("%s: %w", envAllowedOrigins, err)
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// bodyLimitFromEnv reads FUNCTIONS_REQUEST_BODY_SIZE_LIMIT (0: the funchost default).
func bodyLimitFromEnv(getenv func(string) string) (int64, error) {
	v := strings.TrimSpace(getenv(envRequestBodyLimit))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: want a positive number of bytes", envRequestBodyLimit)
	}
	return n, nil
}

// maxConnectionsFromEnv reads FUNCGRAPH_MAX_CONNECTIONS (unset: DefaultMaxConnections).
func maxConnectionsFromEnv(getenv func(string) string) (int, error) {
	v := strings.TrimSpace(getenv(envMaxConnections))
	if v == "" {
		return DefaultMaxConnections, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: want a positive number of connections", envMaxConnections)
	}
	return n, nil
}
