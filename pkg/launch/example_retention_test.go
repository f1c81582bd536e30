package launch_test

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

// The in-memory backend keeps the newest MemoryMaxRuns finished runs unless
// FUNCGRAPH_MEMORY_MAX_RUNS says otherwise; FUNCGRAPH_RETENTION adds an age limit there and
// is the only retention on Azure Storage.
func ExampleMemoryRetention() {
	r := launch.MemoryRetention()
	fmt.Println(r.MaxRuns, r.MaxAge, launch.EnvRetention, launch.EnvMemoryMaxRuns)
	// Output: 1000 0s FUNCGRAPH_RETENTION FUNCGRAPH_MEMORY_MAX_RUNS
}
