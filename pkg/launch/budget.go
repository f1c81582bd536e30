package launch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// Memory budget settings of the embedded default (no AzureWebJobsStorage): the bytes its
// in-memory stores (runs and their history and payloads, platform threads, checkpoints) may
// hold, in total and per identity; past them new work is refused with 507
// (docs/limits.md#memory-budget). Ignored on Azure Storage.
const (
	// envMemoryBudget is the total, in bytes ("134217728") or with a binary unit ("128MiB",
	// "1GiB"); default memoryBudget.
	envMemoryBudget = "FUNCGRAPH_MEMORY_BUDGET"
	// envMemoryBudgetPerIdentity is one identity's share under per-user isolation, in the
	// same units (default a quarter of the total); at most the total.
	envMemoryBudgetPerIdentity = "FUNCGRAPH_MEMORY_BUDGET_PER_IDENTITY"
)

// memoryBudget is the default total of the embedded default's memory budget: with the Go
// runtime's collector (which lets the heap grow to twice what is live) and the process
// itself, it keeps the process within a few hundred MB whatever callers send.
const memoryBudget = 128 << 20

// minMemoryBudget is the smallest total accepted: below it a few runs fill it.
const minMemoryBudget = 4 << 20

// budgetFromEnv reads the memory budget settings.
func budgetFromEnv(getenv func(string) string) (*membudget.Budget, error) {
	l := membudget.Limits{Total: memoryBudget}
	if v := strings.TrimSpace(getenv(envMemoryBudget)); v != "" {
		n, err := parseBytes(v)
		if err != nil || n < minMemoryBudget {
			return nil, fmt.Errorf("%s: want a size of at least 4MiB, e.g. 128MiB or 1GiB", envMemoryBudget)
		}
		l.Total = n
	}
	l.PerIdentity = l.Total / 4
	if v := strings.TrimSpace(getenv(envMemoryBudgetPerIdentity)); v != "" {
		n, err := parseBytes(v)
		if err != nil || n <= 0 || n > l.Total {
			return nil, fmt.Errorf("%s: want a size above 0 and at most %s (%d bytes), e.g. 32MiB", envMemoryBudgetPerIdentity, envMemoryBudget, l.Total)
		}
		l.PerIdentity = n
	}
	return membudget.New(l)
}

// parseBytes parses a size: a count of bytes, or one with the unit KiB, MiB or GiB.
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return n * mult, nil
}
