package launch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
)

// Response budget settings: what the answers of every surface of the server (hosting routes,
// platform routes, runs API) hold while they are sent, and the event streams they keep open,
// per identity and in total; past them a request is refused 429 with Retry-After
// (docs/limits.md#response-budget). Sizes as for the memory budget: bytes, or with KiB, MiB
// or GiB.
const (
	// envResponseBudget is what every answer being sent may hold together (default
	// respbudget.DefaultBytesTotal, 256MiB).
	envResponseBudget = "FUNCGRAPH_RESPONSE_BUDGET"
	// envResponseBudgetPerIdentity is what one identity's answers may hold together under
	// per-user isolation (default 64MiB, at most the total).
	envResponseBudgetPerIdentity = "FUNCGRAPH_RESPONSE_BUDGET_PER_IDENTITY"
	// envResponseMaxBytes is what one answer may hold (default 32MiB, at most one identity's
	// share): a larger one is refused 413.
	envResponseMaxBytes = "FUNCGRAPH_RESPONSE_MAX_BYTES"
	// envMaxStreams is how many event streams may be open together (default 512).
	envMaxStreams = "FUNCGRAPH_MAX_STREAMS"
	// envMaxStreamsPerIdentity is how many one identity may keep open (default 32, at most
	// the total).
	envMaxStreamsPerIdentity = "FUNCGRAPH_MAX_STREAMS_PER_IDENTITY"
)

// minResponseBytes is the smallest byte bound accepted: below it an ordinary answer is refused.
const minResponseBytes = 1 << 20

// responseBudgetFromEnv reads the response budget settings. A bound left unset that would
// pass the one above it (an identity's share above a smaller total) is lowered to it; one set
// that does is refused.
func responseBudgetFromEnv(getenv func(string) string) (*respbudget.Budget, error) {
	l := respbudget.Limits{
		BytesTotal: respbudget.DefaultBytesTotal, BytesPerIdentity: respbudget.DefaultBytesPerIdentity,
		BytesPerResponse: respbudget.DefaultBytesPerResponse,
		StreamsTotal:     respbudget.DefaultStreamsTotal, StreamsPerIdentity: respbudget.DefaultStreamsPerIdentity,
	}
	size := func(name string, dst *int64, most int64, mostName string) error {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			*dst = min(*dst, most)
			return nil
		}
		n, err := parseBytes(v)
		if err != nil || n < minResponseBytes || n > most {
			if mostName == "" {
				return fmt.Errorf("%s: want a size of at least 1MiB, e.g. 256MiB or 1GiB", name)
			}
			return fmt.Errorf("%s: want a size of at least 1MiB and at most %s (%d bytes), e.g. 16MiB", name, mostName, most)
		}
		*dst = n
		return nil
	}
	if err := size(envResponseBudget, &l.BytesTotal, 1<<62, ""); err != nil {
		return nil, err
	}
	if err := size(envResponseBudgetPerIdentity, &l.BytesPerIdentity, l.BytesTotal, envResponseBudget); err != nil {
		return nil, err
	}
	if err := size(envResponseMaxBytes, &l.BytesPerResponse, l.BytesPerIdentity, envResponseBudgetPerIdentity); err != nil {
		return nil, err
	}
	count := func(name string, dst *int, most int, mostName string) error {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			*dst = min(*dst, most)
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > most {
			if mostName == "" {
				return fmt.Errorf("%s: want a positive number of streams", name)
			}
			return fmt.Errorf("%s: want a positive number of streams, at most %s (%d)", name, mostName, most)
		}
		*dst = n
		return nil
	}
	if err := count(envMaxStreams, &l.StreamsTotal, 1<<30, ""); err != nil {
		return nil, err
	}
	if err := count(envMaxStreamsPerIdentity, &l.StreamsPerIdentity, l.StreamsTotal, envMaxStreams); err != nil {
		return nil, err
	}
	return respbudget.New(l), nil
}
