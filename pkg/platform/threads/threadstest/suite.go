package threadstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// RunStoreTests runs the threads.Store conformance suite, the record limits (MaxValuesBytes,
// MaxMetadataBytes) included. newStore returns an empty store for each subtest.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) threads.Store) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	mk := func(id string, at time.Time, meta map[string]any) threads.Thread {
		return threads.Thread{ThreadID: id, CreatedAt: at, UpdatedAt: at, Status: threads.StatusIdle, Metadata: meta}
	}
	t.Run("CreateGetRoundTrip", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		for _, id := range []string{"plain", "a/b\\c#d?e%f g", "UPPER-lower_1", strings.Repeat("x", 256)} {
			want := mk(id, t0.Add(1500*time.Microsecond), map[string]any{"user": "u1", "n": 2.0, "nested": map[string]any{"k": []any{true}}})
			if err := s.Create(ctx, want); err != nil {
				t.Fatalf("Create(%q): %v", id, err)
			}
			got, err := s.Get(ctx, id)
			if err != nil {
				t.Fatalf("Get(%q): %v", id, err)
			}
			if got.ThreadID != id || !got.CreatedAt.Equal(want.CreatedAt.Truncate(time.Millisecond)) && !got.CreatedAt.Equal(want.CreatedAt) ||
				got.Status != threads.StatusIdle || got.AssistantID != "" || got.Values != nil || !jsonEq(got.Metadata, want.Metadata) {
				t.Fatalf("Get(%q) = %+v, want %+v", id, got, want)
			}
		}
		if err := s.Create(ctx, mk("plain", t0, nil)); !errors.Is(err, threads.ErrThreadExists) {
			t.Fatalf("duplicate Create: %v, want ErrThreadExists", err)
		}
		got, _ := s.Get(ctx, "plain")
		if got.Metadata["user"] != "u1" {
			t.Fatalf("duplicate Create changed the thread: %+v", got)
		}
		nilMeta := mk("nil-meta", t0, nil)
		if err := s.Create(ctx, nilMeta); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "nil-meta"); got.Metadata != nil {
			t.Fatalf("nil metadata came back as %v", got.Metadata)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		checks := map[string]error{}
		_, checks["Get"] = s.Get(ctx, "nope")
		_, checks["PatchMetadata"] = s.PatchMetadata(ctx, "nope", map[string]any{"a": 1}, t0)
		checks["Delete"] = s.Delete(ctx, "nope")
		_, checks["Acquire"] = s.Acquire(ctx, "nope", "g", nil, t0)
		checks["Release"] = s.Release(ctx, "nope", threads.StatusIdle, nil, t0)
		for op, err := range checks {
			if !errors.Is(err, threads.ErrThreadNotFound) {
				t.Errorf("%s on a missing thread: %v, want ErrThreadNotFound", op, err)
			}
		}
	})
	t.Run("PatchMetadataMergesShallowly", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		mustCreate(t, s, mk("t", t0, map[string]any{"a": 1.0, "b": map[string]any{"x": 1.0}}))
		got, err := s.PatchMetadata(ctx, "t", map[string]any{"b": map[string]any{"y": 2.0}, "c": "new"}, t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"a": 1.0, "b": map[string]any{"y": 2.0}, "c": "new"}
		if !jsonEq(got.Metadata, want) || !got.UpdatedAt.Equal(t0.Add(time.Minute)) || !got.CreatedAt.Equal(t0) {
			t.Fatalf("PatchMetadata = %+v", got)
		}
		if stored, _ := s.Get(ctx, "t"); !jsonEq(stored.Metadata, want) {
			t.Fatalf("stored metadata = %v", stored.Metadata)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		mustCreate(t, s, mk("t", t0, nil))
		if err := s.Delete(ctx, "t"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "t"); !errors.Is(err, threads.ErrThreadNotFound) {
			t.Fatalf("Get after Delete: %v", err)
		}
	})
	t.Run("SearchCountFilterOrderPage", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		for i := 0; i < 5; i++ {
			meta := map[string]any{"user": fmt.Sprintf("u%d", i%2), "i": float64(i)}
			mustCreate(t, s, mk(fmt.Sprintf("t%d", i), t0.Add(time.Duration(i)*time.Second), meta))
		}
		if _, err := s.Acquire(ctx, "t3", "g", nil, t0); err != nil {
			t.Fatal(err)
		}
		ids := func(ts []threads.Thread) string {
			var out []string
			for _, t := range ts {
				out = append(out, t.ThreadID)
			}
			return strings.Join(out, ",")
		}
		for _, tc := range []struct {
			q    threads.Query
			want string
		}{
			{threads.Query{}, "t4,t3,t2,t1,t0"},
			{threads.Query{Metadata: map[string]any{"user": "u0"}}, "t4,t2,t0"},
			{threads.Query{Metadata: map[string]any{"user": "u0", "i": 2}}, "t2"},
			{threads.Query{Metadata: map[string]any{"missing": nil}}, ""},
			{threads.Query{Status: threads.StatusBusy}, "t3"},
			{threads.Query{Limit: 2, Offset: 1}, "t3,t2"},
			{threads.Query{Offset: 9}, ""},
		} {
			got, err := s.Search(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got) != tc.want {
				t.Errorf("Search(%+v) = %s, want %s", tc.q, ids(got), tc.want)
			}
			n, err := s.Count(ctx, threads.Query{Metadata: tc.q.Metadata, Status: tc.q.Status})
			if err != nil {
				t.Fatal(err)
			}
			if tc.q.Limit == 0 && tc.q.Offset == 0 && n != len(got) {
				t.Errorf("Count(%+v) = %d, want %d", tc.q, n, len(got))
			}
		}
	})
	runSearchFollowsWrites(t, newStore, t0)
	t.Run("AcquireBindsAndRejects", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		mustCreate(t, s, mk("t", t0, map[string]any{"a": 1.0}))
		got, err := s.Acquire(ctx, "t", "g1", map[string]any{"run": "r1"}, t0.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != threads.StatusBusy || got.AssistantID != "g1" || !jsonEq(got.Metadata, map[string]any{"a": 1.0, "run": "r1"}) ||
			!got.UpdatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("Acquire = %+v", got)
		}
		if _, err := s.Acquire(ctx, "t", "g1", nil, t0); !errors.Is(err, threads.ErrThreadBusy) {
			t.Fatalf("second Acquire: %v, want ErrThreadBusy", err)
		}
		var be *threads.BoundError
		if _, err := s.Acquire(ctx, "t", "g2", nil, t0); !errors.As(err, &be) || be.Bound != "g1" || be.Requested != "g2" {
			t.Fatalf("Acquire with another assistant: %v, want BoundError", err)
		}
		if err := s.Release(ctx, "t", threads.StatusError, json.RawMessage(`{"out": [1, "é"]}`), t0.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Get(ctx, "t")
		if got.Status != threads.StatusError || !jsonEq(got.Values, json.RawMessage(`{"out":[1,"é"]}`)) || got.AssistantID != "g1" {
			t.Fatalf("after Release: %+v", got)
		}
		if _, err := s.Acquire(ctx, "t", "g1", nil, t0); err != nil {
			t.Fatalf("Acquire after Release: %v", err)
		}
		if err := s.Release(ctx, "t", threads.StatusIdle, nil, t0); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "t"); got.Status != threads.StatusIdle || got.Values == nil {
			t.Fatalf("Release with nil values must keep them: %+v", got)
		}
		if err := s.Release(ctx, "t", threads.StatusBusy, nil, t0); !errors.Is(err, threads.ErrInvalidArgument) {
			t.Fatalf("Release(busy): %v", err)
		}
	})
	t.Run("AcquireIsExclusiveUnderConcurrency", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		mustCreate(t, s, mk("t", t0, nil))
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.Acquire(ctx, "t", "g", nil, t0)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, threads.ErrThreadBusy):
				t.Errorf("Acquire: %v, want nil or ErrThreadBusy", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d Acquires won, want exactly 1", won)
		}
	})
	t.Run("ResetStaleLocks", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		for _, id := range []string{"old", "fresh", "idle"} {
			mustCreate(t, s, mk(id, t0, nil))
		}
		if _, err := s.Acquire(ctx, "old", "g", nil, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Acquire(ctx, "fresh", "g", nil, t0.Add(50*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ResetStaleLocks(ctx, -time.Second, threads.StatusIdle, t0); !errors.Is(err, threads.ErrInvalidArgument) {
			t.Fatalf("negative age: %v", err)
		}
		if _, err := s.ResetStaleLocks(ctx, time.Second, threads.StatusInterrupted, t0); !errors.Is(err, threads.ErrInvalidArgument) {
			t.Fatalf("status interrupted: %v", err)
		}
		n, err := s.ResetStaleLocks(ctx, 30*time.Minute, threads.StatusError, t0.Add(time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("ResetStaleLocks = %d, %v; want 1", n, err)
		}
		for id, want := range map[string]threads.Status{"old": threads.StatusError, "fresh": threads.StatusBusy, "idle": threads.StatusIdle} {
			if got, _ := s.Get(ctx, id); got.Status != want {
				t.Errorf("%s: status %s, want %s", id, got.Status, want)
			}
		}
	})
	t.Run("LargeValues_RoundTrip", func(t *testing.T) {
		// A 400 KB run output (past one Azure table entity) is kept whole, and status and
		// values read back the same on every store.
		s, ctx := newStore(t), t.Context()
		mustCreate(t, s, mk("t", t0, map[string]any{"k": "v"}))
		if _, err := s.Acquire(ctx, "t", "g", nil, t0); err != nil {
			t.Fatal(err)
		}
		large := json.RawMessage(`{"messages": [{"role": "user", "content": "` + strings.Repeat("é€x", 400_000/6) + `"}]}`)
		if err := s.Release(ctx, "t", threads.StatusIdle, large, t0.Add(time.Second)); err != nil {
			t.Fatalf("Release with 400 KB values: %v", err)
		}
		want := func(what string, got threads.Thread, values json.RawMessage) {
			t.Helper()
			if got.Status != threads.StatusIdle || !jsonEq(got.Values, values) {
				t.Fatalf("%s: status %s, values of %d bytes; want idle with %d bytes", what, got.Status, len(got.Values), len(values))
			}
		}
		got, err := s.Get(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		want("Get", got, large)
		found, err := s.Search(ctx, threads.Query{Metadata: map[string]any{"k": "v"}})
		if err != nil || len(found) != 1 {
			t.Fatalf("Search = %d threads, %v", len(found), err)
		}
		want("Search", found[0], large)
		patched, err := s.PatchMetadata(ctx, "t", map[string]any{"k2": "v2"}, t0.Add(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		want("PatchMetadata's thread", patched, large)
		if _, err := s.Acquire(ctx, "t", "g", nil, t0.Add(3*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, "t", threads.StatusIdle, nil, t0.Add(4*time.Second)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Get(ctx, "t")
		want("a run without output", got, large)
		small := json.RawMessage(`{"messages": []}`)
		if err := s.Release(ctx, "t", threads.StatusIdle, small, t0.Add(5*time.Second)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Get(ctx, "t")
		want("small values after large", got, small)
		if err := s.Release(ctx, "t", threads.StatusIdle, large, t0.Add(6*time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "t"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "t"); !errors.Is(err, threads.ErrThreadNotFound) {
			t.Fatalf("Get after Delete: %v, want ErrThreadNotFound", err)
		}
	})
	t.Run("RefusesRecordsPastTheLimits", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		mustCreate(t, s, mk("t", t0, nil))
		if _, err := s.Acquire(ctx, "t", "g", nil, t0); err != nil {
			t.Fatal(err)
		}
		big := json.RawMessage(`"` + strings.Repeat("a", threads.MaxValuesBytes-1) + `"`)
		if err := s.Release(ctx, "t", threads.StatusIdle, big, t0); !errors.Is(err, threads.ErrTooLarge) {
			t.Fatalf("Release with values past MaxValuesBytes: %v, want ErrTooLarge", err)
		}
		if got, _ := s.Get(ctx, "t"); got.Status != threads.StatusBusy || got.Values != nil {
			t.Fatalf("a refused Release changed the thread: %s, %d bytes of values", got.Status, len(got.Values))
		}
		// Values that need several 64 KiB table properties still fit.
		ok := json.RawMessage(`"` + strings.Repeat("é", 60_000) + `"`)
		if err := s.Release(ctx, "t", threads.StatusIdle, ok, t0); err != nil {
			t.Fatalf("Release with values spanning several properties: %v", err)
		}
		if got, _ := s.Get(ctx, "t"); !jsonEq(got.Values, ok) {
			t.Fatalf("values did not round-trip (%d bytes, want %d)", len(got.Values), len(ok))
		}
		// Metadata is measured as stored: "é" is written \u00e9, six bytes.
		huge := map[string]any{"pad": strings.Repeat("é", threads.MaxMetadataBytes/6)}
		if _, err := s.PatchMetadata(ctx, "t", huge, t0); !errors.Is(err, threads.ErrTooLarge) {
			t.Fatalf("PatchMetadata past MaxMetadataBytes: %v, want ErrTooLarge", err)
		}
		if _, err := s.Acquire(ctx, "t", "g", huge, t0); !errors.Is(err, threads.ErrTooLarge) {
			t.Fatalf("Acquire with metadata past MaxMetadataBytes: %v, want ErrTooLarge", err)
		}
		if got, _ := s.Get(ctx, "t"); got.Metadata != nil || got.Status != threads.StatusIdle {
			t.Fatalf("refused metadata changed the thread: %+v", got.Metadata)
		}
		if err := s.Create(ctx, mk("t2", t0, huge)); !errors.Is(err, threads.ErrTooLarge) {
			t.Fatalf("Create with metadata past MaxMetadataBytes: %v, want ErrTooLarge", err)
		}
		if _, err := s.Get(ctx, "t2"); !errors.Is(err, threads.ErrThreadNotFound) {
			t.Fatalf("a refused Create stored the thread: %v", err)
		}
		fits := map[string]any{"pad": strings.Repeat("é", threads.MaxMetadataBytes/6-10)}
		if _, err := s.PatchMetadata(ctx, "t", fits, t0); err != nil {
			t.Fatalf("PatchMetadata just under MaxMetadataBytes: %v", err)
		}
	})
}

func mustCreate(t *testing.T, s threads.Store, th threads.Thread) {
	t.Helper()
	if err := s.Create(context.Background(), th); err != nil {
		t.Fatalf("Create(%s): %v", th.ThreadID, err)
	}
}

// jsonEq compares two values by their canonical JSON encoding.
func jsonEq(a, b any) bool {
	norm := func(v any) string {
		if raw, ok := v.(json.RawMessage); ok {
			var x any
			if json.Unmarshal(raw, &x) != nil {
				return "invalid:" + string(raw)
			}
			v = x
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	return norm(a) == norm(b)
}
