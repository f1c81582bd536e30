package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// What a Store and a PayloadStore with a budget (WithBudget) account: the bytes of each
// stored row and payload plus the fixed cost of holding it, so that the accounted bytes
// follow the live heap the stores hold (docs/limits.md#memory-budget has the measured
// ratio).
const (
	// rowOverhead is a row's slot (32 bytes) with the slack of its partition's slice (a
	// quarter) and the string header the row's data needs.
	rowOverhead = 80
	// partitionOverhead is a partition's struct, its map entry and its two copies of the key's
	// header (the map's and the shard's sorted keys).
	partitionOverhead = 112
	// payloadOverhead is a payload's map entry and headers.
	payloadOverhead = 64
)

func rowBytes(data string) int64           { return int64(len(data)) + rowOverhead }
func partitionBytes(pk string) int64       { return int64(len(pk)) + partitionOverhead }
func payloadBytes(key string, n int) int64 { return int64(len(key)+n) + payloadOverhead }

// runScope is the budget scope of the run whose instance id is runID: its rows in the Store
// and its payloads in the PayloadStore.
func runScope(runID string) string { return "run/" + runID }

// charge encodes the new rows of ops on partition p (nil: not yet created) and accounts the
// bytes they add or free: a run's own rows to its scope, the others (index and due rows, and
// a new partition) to the total only. It returns the encoded rows (index of ops; "" for a
// delete), or the refusal, with nothing accounted. The shard's lock is held, so the rows
// read are the ones the batch replaces.
func (s *Store) charge(ctx context.Context, pk string, p *partition, ops []engine.Op) ([]string, error) {
	datas := make([]string, len(ops))
	var run, shared int64
	if p == nil {
		shared += partitionBytes(pk)
	}
	for i, op := range ops {
		rk := op.Entity.RowKey
		var d int64
		cur := p.lookup(rk)
		if cur != nil {
			d -= rowBytes(cur.data)
		}
		if op.Kind != engine.OpDelete {
			c := s.codecOf(rk)
			c.mu.Lock()
			if op.Kind == engine.OpMerge {
				datas[i] = c.merge(rk, cur.enc(), op.Entity.Properties)
			} else {
				datas[i] = c.encode(rk, op.Entity.Properties)
			}
			c.mu.Unlock()
			d += rowBytes(datas[i])
		}
		if engine.RunRow(rk) {
			run += d
		} else {
			shared += d
		}
	}
	if run != 0 {
		if err := s.budget.Charge(ctx, runScope(pk), run); err != nil {
			return nil, refusal(err)
		}
	}
	if shared != 0 {
		if err := s.budget.Charge(ctx, "", shared); err != nil {
			if run != 0 {
				_ = s.budget.Charge(ctx, runScope(pk), -run)
			}
			return nil, refusal(err)
		}
	}
	return datas, nil
}

// refusal is a budget's refusal as the engine's stores report it.
func refusal(err error) error { return fmt.Errorf("%w: %w", engine.ErrStorageFull, err) }

var _ engine.RunAccounts = (*Store)(nil)

// AccountsRuns implements engine.RunAccounts: true with a budget.
func (s *Store) AccountsRuns() bool { return s.budget != nil }

// RunOwner implements engine.RunAccounts: the identity run runID's rows count against.
func (s *Store) RunOwner(runID string) string {
	if s.budget == nil {
		return ""
	}
	owner, _ := s.budget.ScopeOwner(runScope(runID))
	return owner
}

// Crowded implements engine.RunAccounts: whether owner holds more than three quarters of its
// limit (membudget.Budget.Crowded).
func (s *Store) Crowded(owner string) bool { return s.budget != nil && s.budget.Crowded(owner) }

// payloadRun returns the run id a payload key starts with (engine.PayloadStore's keys are
// "<run id>/<run nonce>/<name>").
func payloadRun(key string) string {
	id, _, _ := strings.Cut(key, "/")
	return id
}
