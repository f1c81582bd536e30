//go:build integration

package tablethreads

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// opCounter counts the storage requests per table and kind: "query" (a listing) or "point"
// (a read or write of one entity).
type opCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *opCounter) Do(req *policy.Request) (*http.Response, error) {
	path := req.Raw().URL.Path
	seg := path[strings.LastIndex(path, "/")+1:]
	table, kind := seg, "point"
	if i := strings.Index(seg, "("); i >= 0 {
		table = seg[:i]
		if strings.HasSuffix(seg, "()") {
			kind = "query"
		}
	}
	if table != "Tables" {
		c.mu.Lock()
		c.counts[table+" "+kind]++
		c.mu.Unlock()
	}
	return req.Next()
}

func (c *opCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = map[string]int{}
	return out
}

// opsRig is a store on fresh tables whose requests are counted.
type opsRig struct {
	s            *Store
	ops          *opCounter
	table, index string
}

func newOpsRig(t *testing.T) *opsRig {
	ops := &opCounter{counts: map[string]int{}}
	clients, err := azure.NewClients(azure.Settings{ConnectionString: azuritetest.ConnectionString(t)},
		&azure.Options{ClientOptions: azcore.ClientOptions{PerCallPolicies: []policy.Policy{ops}}})
	if err != nil {
		t.Fatal(err)
	}
	r := &opsRig{ops: ops, table: azuritetest.UniqueName("threads")}
	r.index = r.table + "index"
	if r.s, err = Open(t.Context(), clients, Options{Table: r.table, Logger: funchosttest.TestLogger(t)}); err != nil {
		t.Fatal(err)
	}
	return r
}

// check fails unless the counted requests since the last call are exactly want.
func (r *opsRig) check(t *testing.T, what string, want map[string]int) {
	t.Helper()
	got := r.ops.take()
	named := map[string]int{}
	for k, n := range want {
		named[strings.NewReplacer("T ", r.table+" ", "I ", r.index+" ").Replace(k)] = n
	}
	if fmt.Sprint(got) != fmt.Sprint(named) {
		t.Errorf("%s: requests %v, want %v", what, got, named)
	}
}

// TestStore_StorageOps_Integration: among many threads, a search page reads the index shards
// once and one entity per thread returned or skipped, a count by status one entity per
// matching thread, an owner's search one partition, and the stale-lock reset the busy rows
// only — no request lists the thread table, whatever the number of threads.
func TestStore_StorageOps_Integration(t *testing.T) {
	ctx := t.Context()
	r := newOpsRig(t)
	r.ops.take()
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	const n = 120
	for i := range n {
		meta := map[string]any{"owner": fmt.Sprintf("user-%d", i%10)}
		th := threads.Thread{ThreadID: fmt.Sprintf("t%03d", i), CreatedAt: t0.Add(time.Duration(i) * time.Second), UpdatedAt: t0, Status: threads.StatusIdle, Metadata: meta}
		if err := r.s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	r.check(t, "create", map[string]int{"T point": n, "I point": 3 * n}) // rows: all, idle, owner
	for _, id := range []string{"t010", "t100"} {
		if _, err := r.s.Acquire(ctx, id, "g", nil, t0); err != nil {
			t.Fatal(err)
		}
	}
	// Acquire: read + compare-and-swap, the busy row written before, the idle row deleted after.
	r.check(t, "acquire", map[string]int{"T point": 4, "I point": 4})

	page, err := r.s.Search(ctx, threads.Query{Limit: 5, Offset: 3})
	if err != nil || len(page) != 5 || page[0].ThreadID != "t116" || page[4].ThreadID != "t112" {
		t.Fatalf("Search = %v, %v", page, err)
	}
	r.check(t, "search page", map[string]int{"I query": indexShards, "T point": 8})

	page, err = r.s.Search(ctx, threads.Query{Status: threads.StatusIdle, Limit: 3})
	if err != nil || len(page) != 3 || page[0].ThreadID != "t119" {
		t.Fatalf("Search(idle) = %v, %v", page, err)
	}
	r.check(t, "search idle page", map[string]int{"I query": indexShards, "T point": 3})

	page, err = r.s.Search(ctx, threads.Query{Metadata: map[string]any{"owner": "user-3"}, Limit: 100})
	if err != nil || len(page) != n/10 || page[0].ThreadID != "t113" {
		t.Fatalf("Search(owner) = %v, %v", page, err)
	}
	r.check(t, "search owner", map[string]int{"I query": 1, "T point": n / 10})

	if c, err := r.s.Count(ctx, threads.Query{Status: threads.StatusBusy}); err != nil || c != 2 {
		t.Fatalf("Count(busy) = %d, %v", c, err)
	}
	r.check(t, "count busy", map[string]int{"I query": indexShards, "T point": 2})

	reset, err := r.s.ResetStaleLocks(ctx, time.Minute, threads.StatusError, t0.Add(time.Hour))
	if err != nil || reset != 2 {
		t.Fatalf("ResetStaleLocks = %d, %v", reset, err)
	}
	// Per stale thread: the verifying read, then read + compare-and-swap; the error row before,
	// the busy row deleted after.
	r.check(t, "reset", map[string]int{"I query": indexShards, "T point": 2 * 3, "I point": 2 * 2})

	if reset, err := r.s.ResetStaleLocks(ctx, time.Minute, threads.StatusError, t0.Add(time.Hour)); err != nil || reset != 0 {
		t.Fatalf("second ResetStaleLocks = %d, %v", reset, err)
	}
	r.check(t, "reset, nothing busy", map[string]int{"I query": indexShards})
}

// TestStore_IndexRepair_Integration: rows no thread vouches for (a crash between the row and
// the entity, or between the entity and the old row's delete) are not listed, and are deleted
// by the reader that meets them once they are dead.
func TestStore_IndexRepair_Integration(t *testing.T) {
	ctx := t.Context()
	r := newOpsRig(t)
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	th := threads.Thread{ThreadID: "t", CreatedAt: t0, UpdatedAt: t0, Status: threads.StatusIdle}
	if err := r.s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	rec, err := r.s.get(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	// A busy row of the version the entity has reached (its writer lost) and a busy row of a
	// later one (a write in flight): neither lists the thread as busy; only the first is dead.
	dead := ixRow{pk: statusPartition(shard("t"), threads.StatusBusy), rk: indexRowKey(t0, "t", "dead"), tid: "t", ver: rec.ix.ver}
	pending := ixRow{pk: dead.pk, rk: indexRowKey(t0, "t", "pending"), tid: "t", ver: rec.ix.ver + 1}
	// A row of a thread that was never stored.
	ghost := ixRow{pk: allPartition(shard("ghost")), rk: indexRowKey(t0, "ghost", "x"), tid: "ghost", ver: 1}
	if err := r.s.putRows(ctx, []ixRow{dead, pending, ghost}); err != nil {
		t.Fatal(err)
	}
	if c, err := r.s.Count(ctx, threads.Query{Status: threads.StatusBusy}); err != nil || c != 0 {
		t.Fatalf("Count(busy) = %d, %v", c, err)
	}
	if got, err := r.s.Search(ctx, threads.Query{}); err != nil || len(got) != 1 {
		t.Fatalf("Search = %v, %v", got, err)
	}
	left, err := r.s.rows(ctx, family(threads.Query{Status: threads.StatusBusy}))
	if err != nil || len(left) != 1 || left[0].rk != pending.rk {
		t.Fatalf("busy rows after the repair = %v, %v; want the pending one only", left, err)
	}
	if all, _ := r.s.rows(ctx, family(threads.Query{})); len(all) != 2 {
		t.Fatalf("rows of every thread = %v: the young ghost row stays until repairAfter", all)
	}
}
