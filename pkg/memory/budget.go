package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// What a Store, a PayloadStore and a LiveStore with a budget (WithBudget) account: the bytes
// of each stored row, payload and live log plus the fixed cost of holding it, so that the
// accounted bytes follow the live heap the stores hold (docs/limits.md#memory-budget has the
// measured ratio).
const (
	// rowOverhead is a row's slot (32 bytes) with the slack of its partition's slice (a
	// quarter) and the string header the row's data needs.
	rowOverhead = 80
	// partitionOverhead is a partition's struct, its map entry and its two copies of the key's
	// header (the map's and the shard's sorted keys).
	partitionOverhead = 112
	// payloadOverhead is a payload's map entry and headers.
	payloadOverhead = 64
	// liveOverhead is a live log's map entry, its struct and headers.
	liveOverhead = 96
)

func rowBytes(data string) int64           { return int64(len(data)) + rowOverhead }
func partitionBytes(pk string) int64       { return int64(len(pk)) + partitionOverhead }
func payloadBytes(key string, n int) int64 { return int64(len(key)+n) + payloadOverhead }
func liveBytes(key string, n int) int64    { return int64(len(key)+n) + liveOverhead }

// runScope is the budget scope of the run whose instance id is runID: its rows in the Store,
// its payloads in the PayloadStore and its logs in the LiveStore.
func runScope(runID string) string { return "run/" + runID }

// charge encodes the new rows of ops on partition p (nil: not yet created) and accounts the
// bytes they add or free, each to the scope of the run it belongs to: a run's own rows and
// partition to its scope, and so are the rows the engine keeps about many runs, index and due
// rows, billed to the run they name (engine.RowRun) — only the repair pass's own rows and the
// index's partitions count against the total alone. So one identity's share bounds all it
// makes the store hold. It returns the encoded rows (index of ops; "" for a delete), or the
// refusal, with nothing accounted. The shard's lock is held, so the rows read are the ones
// the batch replaces.
func (s *Store) charge(ctx context.Context, pk string, p *partition, ops []engine.Op) ([]string, error) {
	ctx = budgetContext(ctx)
	datas := make([]string, len(ops))
	var bills scopeBills
	if p == nil {
		bills.add(partitionScope(pk, ops), partitionBytes(pk))
	}
	for i, op := range ops {
		rk := op.Entity.RowKey
		var d int64
		cur := p.lookup(rk)
		c := s.codecOf(rk)
		c.mu.Lock()
		if cur != nil {
			d -= rowBytes(cur.data)
		}
		if op.Kind != engine.OpDelete {
			if op.Kind == engine.OpMerge {
				datas[i] = c.merge(rk, cur.enc(), op.Entity.Properties)
			} else {
				datas[i] = c.encode(rk, op.Entity.Properties)
			}
			d += rowBytes(datas[i])
		}
		scope := ""
		if engine.RunRow(rk) {
			scope = runScope(pk)
		} else if id := engine.RowRun(rk, func(name string) (any, bool) {
			if v, ok := op.Entity.Properties[name]; ok {
				return v, true
			}
			if cur != nil {
				return c.get(cur.enc(), name)
			}
			return nil, false
		}); id != "" {
			scope = runScope(id)
		}
		c.mu.Unlock()
		bills.add(scope, d)
	}
	for i, b := range bills {
		if b.n == 0 {
			continue
		}
		if err := s.budget.Charge(ctx, b.scope, b.n); err != nil {
			for _, done := range bills[:i] {
				_ = s.budget.Charge(ctx, done.scope, -done.n)
			}
			return nil, refusal(err)
		}
	}
	return datas, nil
}

// scopeBills sums a batch's bytes per budget scope, in the order the scopes come ("" : the
// total only). A batch is one partition: one scope, or a few for the index's rows.
type scopeBills []struct {
	scope string
	n     int64
}

func (b *scopeBills) add(scope string, n int64) {
	for i := range *b {
		if (*b)[i].scope == scope {
			(*b)[i].n += n
			return
		}
	}
	*b = append(*b, struct {
		scope string
		n     int64
	}{scope, n})
}

// partitionScope is the scope partition pk counts against: its run's, for a run's partition
// (a batch there holds only the run's own rows), else the total only ("").
func partitionScope(pk string, ops []engine.Op) string {
	if len(ops) > 0 && engine.RunRow(ops[0].Entity.RowKey) {
		return runScope(pk)
	}
	return ""
}

// budgetContext returns ctx as the budget reads it: a start the engine bills to an owner
// (engine.BilledTo) is that owner's new work, and a write that makes room
// (engine.MakingRoom) is never refused.
func budgetContext(ctx context.Context) context.Context {
	if owner, ok := engine.BilledOwner(ctx); ok {
		ctx = membudget.NewWork(ctx, owner)
	}
	if engine.IsMakingRoom(ctx) {
		ctx = membudget.Exempt(ctx)
	}
	return ctx
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
