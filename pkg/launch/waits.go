package launch

import (
	"fmt"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
)

// envMaxWait bounds how long a route waits for a graph run before it answers without the
// run's result (Go duration, e.g. 90s; default host.DefaultMaxWait, 200 s). It must be below
// the Azure front end's 230 s cut (funchost.FrontEndTimeout), and so below host.json's
// functionTimeout, which is at least that long in every plan funcgraph supports (keep it so).
// Assemble passes it to host.Options.MaxWait; see docs/http-hosting.md, "Bounded waits".
const envMaxWait = "FUNCGRAPH_MAX_WAIT"

// maxWaitFromEnv reads envMaxWait (0 when unset: the hosting app's default).
func maxWaitFromEnv(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv(envMaxWait))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d >= funchost.FrontEndTimeout {
		return 0, fmt.Errorf("%s: want a duration above 0 and below %gs (the Azure front end's cut), such as %gs; got %q",
			envMaxWait, funchost.FrontEndTimeout.Seconds(), host.DefaultMaxWait.Seconds(), v)
	}
	return d, nil
}
