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
	// EnvRetention is the age (a Go duration, e.g. "720h") past which finished runs are
	// purged, counted from each run's creation. Off by default on Azure Storage; on the
	// in-memory backend it adds an age limit to the count limit.
	EnvRetention = "FUNCGRAPH_RETENTION"
	// EnvMemoryMaxRuns is how many finished runs the in-memory backend keeps, the newest
	// (default MemoryMaxRuns; 0 keeps every run). Ignored on Azure Storage.
	EnvMemoryMaxRuns = "FUNCGRAPH_MEMORY_MAX_RUNS"
)

// MemoryMaxRuns is the default count of finished runs the in-memory backend keeps. At the
// ~40 KB a small finished run holds there, it bounds them to about 40 MB, plus the runs that
// finished since the last repair pass (SweepInterval, 30 s).
const MemoryMaxRuns = 1000

// memoryPerPass is the in-memory backend's Retention.PerPass: a purge there costs no
// request, so one pass may take all the runs finished since the last one under heavy load.
const memoryPerPass = 20000

// MemoryRetention is the in-memory backend's default retention: the newest MemoryMaxRuns
// finished runs.
func MemoryRetention() engine.Retention {
	return engine.Retention{MaxRuns: MemoryMaxRuns, PerPass: memoryPerPass}
}

// retentionFromEnv reads the retention settings for the backend (azure or in-memory).
func retentionFromEnv(getenv func(string) string, azure bool) (engine.Retention, error) {
	r := engine.Retention{}
	if !azure {
		r = MemoryRetention()
		if v := strings.TrimSpace(getenv(EnvMemoryMaxRuns)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return engine.Retention{}, fmt.Errorf("%s: want a count of finished runs, 0 or more", EnvMemoryMaxRuns)
			}
			r.MaxRuns = n
		}
	}
	if v := strings.TrimSpace(getenv(EnvRetention)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return engine.Retention{}, fmt.Errorf("%s: want a duration of at least 1m, e.g. 720h", EnvRetention)
		}
		r.MaxAge = d
	}
	return r, nil
}
