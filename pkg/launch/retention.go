package launch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Retention settings. The repair pass (Engine.Sweep: every 30 s in-process, every five
// minutes as fg_repair under the Functions host) purges the finished runs past them, oldest
// first, from the run index; it never touches a Pending or Running run.
const (
	// envRetention is the age (a Go duration, e.g. "720h") past which finished runs are
	// purged, counted from each run's finish. Off by default on Azure Storage; on the
	// in-memory backend it adds an age limit to the count limit: a run goes past either.
	envRetention = "FUNCGRAPH_RETENTION"
	// envMemoryMaxRuns is how many finished runs the in-memory backend keeps per identity,
	// the newest (default memoryMaxRuns; 0 keeps every run). Ignored on Azure Storage.
	envMemoryMaxRuns = "FUNCGRAPH_MEMORY_MAX_RUNS"
)

// memoryMaxRuns is the default count of finished runs the in-memory backend keeps per
// identity (the store accounts runs to owners: engine.RunAccounts). A small finished run holds
// about 1.8 KB there, one with a large state far more (history copies it at every step), so
// the memory budget (budget.go) bounds the bytes; this bounds the count.
const memoryMaxRuns = 1000

// memoryPerPass is the in-memory backend's Retention.PerPass: a purge there costs no
// request, so one pass may take all the runs finished since the last one under heavy load.
const memoryPerPass = 20000

// memoryRetention is the in-memory backend's default retention: the newest memoryMaxRuns
// finished runs.
func memoryRetention() engine.Retention {
	return engine.Retention{MaxRuns: memoryMaxRuns, PerPass: memoryPerPass}
}

// retentionFromEnv reads the retention settings for the backend (azure or in-memory).
func retentionFromEnv(getenv func(string) string, azure bool) (engine.Retention, error) {
	r := engine.Retention{}
	if !azure {
		r = memoryRetention()
		if v := strings.TrimSpace(getenv(envMemoryMaxRuns)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return engine.Retention{}, fmt.Errorf("%s: want a count of finished runs, 0 or more", envMemoryMaxRuns)
			}
			r.MaxRuns = n
		}
	}
	if v := strings.TrimSpace(getenv(envRetention)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return engine.Retention{}, fmt.Errorf("%s: want a duration of at least 1m, e.g. 720h", envRetention)
		}
		r.MaxAge = d
	}
	return r, nil
}
