package threadstest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// runSearchFollowsWrites checks that Search and Count follow every write that moves a thread
// between the sets they select (status, the metadata "owner", existence), including writes that
// fail, so a store that serves them from an index keeps it in step.
func runSearchFollowsWrites(t *testing.T, newStore func(t *testing.T) threads.Store, t0 time.Time) {
	t.Run("SearchFollowsWrites", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		for i, owner := range []any{"alice", "bob", "alice", 7.0} {
			mustCreate(t, s, threads.Thread{ThreadID: fmt.Sprintf("t%d", i), CreatedAt: t0.Add(time.Duration(i) * time.Second),
				UpdatedAt: t0, Status: threads.StatusIdle, Metadata: map[string]any{"owner": owner}})
		}
		expect := func(what string, q threads.Query, want string) {
			t.Helper()
			got, err := s.Search(ctx, q)
			if err != nil {
				t.Fatalf("%s: Search: %v", what, err)
			}
			var ids []string
			for _, th := range got {
				ids = append(ids, th.ThreadID)
			}
			if strings.Join(ids, ",") != want {
				t.Errorf("%s: Search(%+v) = %s, want %s", what, q, strings.Join(ids, ","), want)
			}
			n, err := s.Count(ctx, threads.Query{Metadata: q.Metadata, Status: q.Status})
			if err != nil || q.Limit == 0 && q.Offset == 0 && n != len(got) {
				t.Errorf("%s: Count(%+v) = %d, %v; want %d", what, q, n, err, len(got))
			}
		}
		alice, busy := map[string]any{"owner": "alice"}, threads.Query{Status: threads.StatusBusy}
		expect("created", threads.Query{Metadata: alice}, "t2,t0")
		expect("numeric owner", threads.Query{Metadata: map[string]any{"owner": 7}}, "t3")
		expect("owner and status", threads.Query{Metadata: alice, Status: threads.StatusIdle, Limit: 1, Offset: 1}, "t0")
		if err := s.Create(ctx, threads.Thread{ThreadID: "t0", CreatedAt: t0, UpdatedAt: t0, Status: threads.StatusBusy}); !errors.Is(err, threads.ErrThreadExists) {
			t.Fatalf("duplicate Create: %v", err)
		}
		expect("after a duplicate Create", threads.Query{}, "t3,t2,t1,t0")
		expect("nothing busy after a duplicate Create", busy, "")

		if _, err := s.Acquire(ctx, "t1", "g", map[string]any{"owner": "alice"}, t0); err != nil {
			t.Fatal(err)
		}
		expect("acquired", busy, "t1")
		expect("acquired, idle", threads.Query{Status: threads.StatusIdle}, "t3,t2,t0")
		expect("owner merged by Acquire", threads.Query{Metadata: alice}, "t2,t1,t0")
		expect("former owner", threads.Query{Metadata: map[string]any{"owner": "bob"}}, "")
		if _, err := s.Acquire(ctx, "t1", "g", nil, t0); !errors.Is(err, threads.ErrThreadBusy) {
			t.Fatalf("second Acquire: %v", err)
		}
		expect("after a refused Acquire", busy, "t1")

		if err := s.Release(ctx, "t1", threads.StatusInterrupted, nil, t0); err != nil {
			t.Fatal(err)
		}
		expect("released", busy, "")
		expect("interrupted", threads.Query{Status: threads.StatusInterrupted}, "t1")

		if _, err := s.PatchMetadata(ctx, "t2", map[string]any{"owner": nil}, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PatchMetadata(ctx, "t3", map[string]any{"owner": "alice", "x": 1}, t0); err != nil {
			t.Fatal(err)
		}
		expect("owners patched", threads.Query{Metadata: alice}, "t3,t1,t0")

		if _, err := s.Acquire(ctx, "t0", "g", nil, t0); err != nil {
			t.Fatal(err)
		}
		if n, err := s.ResetStaleLocks(ctx, time.Minute, threads.StatusError, t0.Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("ResetStaleLocks = %d, %v", n, err)
		}
		expect("reset", busy, "")
		expect("reset to error", threads.Query{Status: threads.StatusError}, "t0")

		if err := s.Delete(ctx, "t3"); err != nil {
			t.Fatal(err)
		}
		expect("deleted", threads.Query{Metadata: alice}, "t1,t0")
		expect("deleted, all", threads.Query{}, "t2,t1,t0")
		if err := s.Create(ctx, threads.Thread{ThreadID: "t3", CreatedAt: t0.Add(-time.Second), UpdatedAt: t0, Status: threads.StatusIdle}); err != nil {
			t.Fatal(err)
		}
		expect("created again, older", threads.Query{}, "t2,t1,t0,t3")
		expect("created again, owner gone", threads.Query{Metadata: alice}, "t1,t0")
	})
}
