package checkpointtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
)

// RunSaverTests runs the checkpoint.Saver conformance suite. newSaver returns an empty saver
// for each subtest.
func RunSaverTests(t *testing.T, newSaver func(t *testing.T) checkpoint.Saver) {
	t.Run("GetMissing", func(t *testing.T) {
		s, ctx := newSaver(t), t.Context()
		_, err := s.Get(ctx, checkpoint.Ref{ThreadID: "nobody"})
		wantIs(t, err, checkpoint.ErrNotFound)
		put(t, s, "t1", "", cp("c1", "", nil), nil)
		_, err = s.Get(ctx, checkpoint.Ref{ThreadID: "t1", ID: "c0"})
		wantIs(t, err, checkpoint.ErrNotFound)
		got, err := s.List(ctx, "nobody", "", checkpoint.ListOptions{})
		if err != nil || len(got) != 0 {
			t.Fatalf("List(unknown) = %v, %v; want none", got, err)
		}
	})
	t.Run("PutGetRoundTrip", func(t *testing.T) {
		s := newSaver(t)
		c1 := cp("c1", "", map[string]string{"messages": "v1", "gone": "v1"})
		c1.Metadata = json.RawMessage(`{"source":"loop","step":1}`)
		put(t, s, "t1", "", c1, map[string]checkpoint.Value{"messages": jv(`["a"]`), "gone": {SerdeType: checkpoint.SerdeEmpty}})
		c2 := cp("c2", "c1", map[string]string{"messages": "v2", "gone": "v1"})
		put(t, s, "t1", "", c2, map[string]checkpoint.Value{"messages": jv(`["a","b"]`)})
		latest := get(t, s, checkpoint.Ref{ThreadID: "t1"})
		if latest.Checkpoint.ID != "c2" || latest.Checkpoint.ParentID != "c1" || latest.ThreadID != "t1" || latest.NS != "" {
			t.Fatalf("latest = %+v; want c2 with parent c1", latest.Checkpoint)
		}
		if !latest.Checkpoint.TS.Equal(c2.TS) {
			t.Fatalf("TS = %v; want %v", latest.Checkpoint.TS, c2.TS)
		}
		wantValues(t, latest, map[string]string{"messages": `["a","b"]`})
		first := get(t, s, checkpoint.Ref{ThreadID: "t1", ID: "c1"})
		wantValues(t, first, map[string]string{"messages": `["a"]`})
		wantJSON(t, first.Checkpoint.Metadata, `{"source":"loop","step":1}`)
		wantJSON(t, latest.Checkpoint.Metadata, `{}`)
		if got := latest.Checkpoint.ChannelVersions; len(got) != 2 || got["messages"] != "v2" || got["gone"] != "v1" {
			t.Fatalf("versions = %v", got)
		}
	})
	t.Run("UnchangedChannelKeepsEarlierValue", func(t *testing.T) {
		s := newSaver(t)
		put(t, s, "t1", "", cp("c1", "", map[string]string{"a": "1", "b": "1"}), map[string]checkpoint.Value{"a": jv(`"a1"`), "b": jv(`"b1"`)})
		put(t, s, "t1", "", cp("c2", "c1", map[string]string{"a": "1", "b": "2"}), map[string]checkpoint.Value{"b": jv(`"b2"`)})
		wantValues(t, get(t, s, checkpoint.Ref{ThreadID: "t1"}), map[string]string{"a": `"a1"`, "b": `"b2"`})
	})
	t.Run("ListNewestFirstWithBeforeAndLimit", func(t *testing.T) {
		s := newSaver(t)
		for i := 1; i <= 5; i++ {
			put(t, s, "t1", "", cp(fmt.Sprintf("c%d", i), "", nil), nil)
		}
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{}), "c5", "c4", "c3", "c2", "c1")
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{Limit: 2}), "c5", "c4")
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{Before: "c4", Limit: 2}), "c3", "c2")
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{Before: "c1"}))
	})
	t.Run("LatestOnlyMovesForward", func(t *testing.T) {
		s := newSaver(t)
		put(t, s, "t1", "", cp("c2", "", nil), nil)
		put(t, s, "t1", "", cp("c1", "", nil), nil)
		if got := get(t, s, checkpoint.Ref{ThreadID: "t1"}).Checkpoint.ID; got != "c2" {
			t.Fatalf("latest = %s; want c2 (an older id does not move the latest back)", got)
		}
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{}), "c2", "c1")
	})
	t.Run("NamespacesAndEscapedIDsAreIsolated", func(t *testing.T) {
		s := newSaver(t)
		odd, oddNS := "a/b?c#d %2F é", "sub|ns/x"
		put(t, s, odd, "", cp("c1", "", map[string]string{"ch/1": "v"}), map[string]checkpoint.Value{"ch/1": jv(`1`)})
		put(t, s, odd, oddNS, cp("c9", "", map[string]string{"ch/1": "v"}), map[string]checkpoint.Value{"ch/1": jv(`2`)})
		put(t, s, "a", "", cp("c5", "", nil), nil)
		wantValues(t, get(t, s, checkpoint.Ref{ThreadID: odd}), map[string]string{"ch/1": `1`})
		wantValues(t, get(t, s, checkpoint.Ref{ThreadID: odd, NS: oddNS}), map[string]string{"ch/1": `2`})
		wantIDs(t, list(t, s, odd, "", checkpoint.ListOptions{}), "c1")
		wantIDs(t, list(t, s, odd, oddNS, checkpoint.ListOptions{}), "c9")
		wantIDs(t, list(t, s, "a", "", checkpoint.ListOptions{}), "c5")
		wantIDs(t, list(t, s, "a/b", "", checkpoint.ListOptions{}))
	})
	t.Run("DotSegmentIDsAreIsolated", func(t *testing.T) {
		// "." and ".." are ids like any other: on Blob storage they never become a dot segment
		// that a URL normaliser would collapse into another thread's path.
		s := newSaver(t)
		put(t, s, "..", "..", cp("..", "", map[string]string{"..": "."}), map[string]checkpoint.Value{"..": jv(`"dotdot"`)})
		put(t, s, ".", ".", cp(".", "", map[string]string{".": ".."}), map[string]checkpoint.Value{".": jv(`"dot"`)})
		put(t, s, "ns", "", cp("c1", "", nil), nil)
		wantValues(t, get(t, s, checkpoint.Ref{ThreadID: "..", NS: ".."}), map[string]string{"..": `"dotdot"`})
		wantValues(t, get(t, s, checkpoint.Ref{ThreadID: ".", NS: "."}), map[string]string{".": `"dot"`})
		wantIDs(t, list(t, s, "..", "..", checkpoint.ListOptions{}), "..")
		wantIDs(t, list(t, s, ".", ".", checkpoint.ListOptions{}), ".")
		wantIDs(t, list(t, s, "ns", "", checkpoint.ListOptions{}), "c1")
		wantIDs(t, list(t, s, "..", "", checkpoint.ListOptions{}))
	})
	t.Run("PendingWrites", func(t *testing.T) {
		s, ctx := newSaver(t), t.Context()
		put(t, s, "t1", "", cp("c1", "", nil), nil)
		ref := checkpoint.Ref{ThreadID: "t1", ID: "c1"}
		w := func(task string, idx int, val string) checkpoint.Write {
			return checkpoint.Write{TaskID: task, TaskPath: "path|" + task, Channel: "ch é", Idx: idx, Value: jv(val)}
		}
		if err := s.PutWrites(ctx, ref, []checkpoint.Write{w("t/2", 0, `"x"`), w("t1", 1, `"b"`), w("t1", 0, `"a"`), w("t1", -1, `"err1"`)}); err != nil {
			t.Fatal(err)
		}
		// A non-negative index is written once; a negative one overwrites.
		if err := s.PutWrites(ctx, ref, []checkpoint.Write{w("t1", 0, `"changed"`), w("t1", -1, `"err2"`)}); err != nil {
			t.Fatal(err)
		}
		got := get(t, s, ref).Writes
		want := []checkpoint.Write{w("t/2", 0, `"x"`), w("t1", -1, `"err2"`), w("t1", 0, `"a"`), w("t1", 1, `"b"`)}
		if len(got) != len(want) {
			t.Fatalf("writes = %+v; want %+v", got, want)
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.TaskID != w.TaskID || g.TaskPath != w.TaskPath || g.Channel != w.Channel || g.Idx != w.Idx ||
				g.Value.SerdeType != w.Value.SerdeType || string(g.Value.Data) != string(w.Value.Data) {
				t.Fatalf("write %d = %+v; want %+v", i, g, w)
			}
		}
		if ws := get(t, s, checkpoint.Ref{ThreadID: "t1"}).Writes; len(ws) != 4 {
			t.Fatalf("latest has %d writes; want 4", len(ws))
		}
	})
	t.Run("DeleteThread", func(t *testing.T) {
		s, ctx := newSaver(t), t.Context()
		put(t, s, "t1", "", cp("c1", "", map[string]string{"a": "1"}), map[string]checkpoint.Value{"a": jv(`1`)})
		put(t, s, "t1", "ns", cp("c1", "", nil), nil)
		put(t, s, "t2", "", cp("c1", "", nil), nil)
		if err := s.DeleteThread(ctx, "t1"); err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{"", "ns"} {
			_, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t1", NS: ns})
			wantIs(t, err, checkpoint.ErrNotFound)
		}
		get(t, s, checkpoint.Ref{ThreadID: "t2"})
		if err := s.DeleteThread(ctx, "never"); err != nil {
			t.Fatalf("DeleteThread(unknown) = %v; want nil", err)
		}
	})
	t.Run("DeleteBeforeAndPrune", func(t *testing.T) {
		s, ctx := newSaver(t), t.Context()
		for i := 1; i <= 6; i++ {
			id := fmt.Sprintf("c%d", i)
			put(t, s, "t1", "", cp(id, "", map[string]string{"a": id}), map[string]checkpoint.Value{"a": jv(`"` + id + `"`)})
		}
		n, err := s.DeleteBefore(ctx, checkpoint.Ref{ThreadID: "t1", ID: "c3"})
		if err != nil || n != 2 {
			t.Fatalf("DeleteBefore(c3) = %d, %v; want 2", n, err)
		}
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{}), "c6", "c5", "c4", "c3")
		wantValues(t, get(t, s, checkpoint.Ref{ThreadID: "t1", ID: "c3"}), map[string]string{"a": `"c3"`})
		_, err = s.Prune(ctx, "t1", "", -1)
		wantIs(t, err, checkpoint.ErrInvalidArgument)
		if n, err = s.Prune(ctx, "t1", "", 2); err != nil || n != 2 {
			t.Fatalf("Prune(2) = %d, %v; want 2", n, err)
		}
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{}), "c6", "c5")
		if n, err = s.Prune(ctx, "t1", "", 5); err != nil || n != 0 {
			t.Fatalf("Prune(5) = %d, %v; want 0", n, err)
		}
		if n, err = s.Prune(ctx, "t1", "", 1); err != nil || n != 1 { // one over: the oldest goes
			t.Fatalf("Prune(1) = %d, %v; want 1", n, err)
		}
		wantIDs(t, list(t, s, "t1", "", checkpoint.ListOptions{}), "c6")
		if n, err = s.Prune(ctx, "t1", "", 0); err != nil || n != 1 {
			t.Fatalf("Prune(0) = %d, %v; want 1", n, err)
		}
		_, err = s.Get(ctx, checkpoint.Ref{ThreadID: "t1"})
		wantIs(t, err, checkpoint.ErrNotFound)
	})
	t.Run("SweepOrphanedValues", func(t *testing.T) {
		s, ctx := newSaver(t), t.Context()
		for i := 1; i <= 4; i++ {
			id := fmt.Sprintf("c%d", i)
			put(t, s, "t1", "", cp(id, "", map[string]string{"a": id, "b": "1"}), map[string]checkpoint.Value{"a": jv(`"` + id + `"`), "b": jv(`"b"`)})
		}
		if _, err := s.Prune(ctx, "t1", "", 1); err != nil {
			t.Fatal(err)
		}
		_, err := s.SweepOrphanedValues(ctx, "t1", checkpoint.SweepOptions{Grace: -time.Second})
		wantIs(t, err, checkpoint.ErrInvalidArgument)
		rep, err := s.SweepOrphanedValues(ctx, "t1", checkpoint.SweepOptions{Grace: time.Hour, Delete: true})
		if err != nil || rep.Orphans != 0 || rep.Deleted != 0 {
			t.Fatalf("sweep inside the grace period = %+v, %v; want nothing", rep, err)
		}
		rep, err = s.SweepOrphanedValues(ctx, "t1", checkpoint.SweepOptions{Grace: time.Nanosecond})
		if err != nil || rep.Orphans != 3 || rep.Deleted != 0 {
			t.Fatalf("dry run = %+v, %v; want 3 orphans, none deleted", rep, err)
		}
		rep, err = s.SweepOrphanedValues(ctx, "t1", checkpoint.SweepOptions{Grace: time.Nanosecond, Delete: true})
		if err != nil || rep.Orphans != 3 || rep.Deleted != 3 {
			t.Fatalf("sweep = %+v, %v; want 3 deleted", rep, err)
		}
		wantValues(t, get(t, s, checkpoint.Ref{ThreadID: "t1"}), map[string]string{"a": `"c4"`, "b": `"b"`})
		rep, err = s.SweepOrphanedValues(ctx, "t1", checkpoint.SweepOptions{Grace: time.Nanosecond, Delete: true})
		if err != nil || rep.Orphans != 0 {
			t.Fatalf("second sweep = %+v, %v; want nothing left", rep, err)
		}
	})
	t.Run("InvalidArgumentsWriteNothing", func(t *testing.T) {
		s, ctx := newSaver(t), t.Context()
		long := strings.Repeat("x", checkpoint.MaxNameLength)
		cases := []struct {
			name   string
			tid    string
			cp     checkpoint.Checkpoint
			values map[string]checkpoint.Value
		}{
			{"empty thread id", "", cp("c1", "", nil), nil},
			{"empty checkpoint id", "t1", cp("", "", nil), nil},
			{"thread id too long", long, cp("c1", "", nil), nil},
			{"value without a version", "t1", cp("c1", "", nil), map[string]checkpoint.Value{"a": jv(`1`)}},
			{"empty serde type", "t1", cp("c1", "", map[string]string{"a": "1"}), map[string]checkpoint.Value{"a": {Data: []byte("1")}}},
			{"metadata not an object", "t1", checkpoint.Checkpoint{ID: "c1", Metadata: json.RawMessage(`[1]`)}, nil},
		}
		for _, tc := range cases {
			err := s.Put(ctx, tc.tid, "", tc.cp, tc.values)
			if !errors.Is(err, checkpoint.ErrInvalidArgument) {
				t.Errorf("%s: Put = %v; want ErrInvalidArgument", tc.name, err)
			}
		}
		_, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t1"})
		wantIs(t, err, checkpoint.ErrNotFound)
		err = s.PutWrites(ctx, checkpoint.Ref{ThreadID: "t1"}, []checkpoint.Write{{TaskID: "x", Idx: 0, Value: jv(`1`)}})
		wantIs(t, err, checkpoint.ErrInvalidArgument)
		big := checkpoint.Value{SerdeType: checkpoint.SerdeJSON, Data: make([]byte, checkpoint.MaxValueBytes+1)}
		err = s.Put(ctx, "t1", "", cp("c1", "", map[string]string{"a": "1"}), map[string]checkpoint.Value{"a": big})
		wantIs(t, err, checkpoint.ErrTooLarge)
		_, err = s.Get(ctx, checkpoint.Ref{ThreadID: "t1"})
		wantIs(t, err, checkpoint.ErrNotFound)
	})
	t.Run("ConcurrentThreads", func(t *testing.T) {
		s, ctx := newSaver(t), t.Context()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tid := fmt.Sprintf("t%d", i)
				for j := 1; j <= 3; j++ {
					id := fmt.Sprintf("c%d", j)
					v := checkpoint.Value{SerdeType: checkpoint.SerdeJSON, Data: []byte(fmt.Sprintf(`"%s-%s"`, tid, id))}
					if err := s.Put(ctx, tid, "", cp(id, "", map[string]string{"a": id}), map[string]checkpoint.Value{"a": v}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for i := range 8 {
			tid := fmt.Sprintf("t%d", i)
			wantValues(t, get(t, s, checkpoint.Ref{ThreadID: tid}), map[string]string{"a": fmt.Sprintf(`"%s-c3"`, tid)})
		}
	})
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC)

func cp(id, parent string, versions map[string]string) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{ID: id, ParentID: parent, TS: t0.Add(time.Duration(len(id)) * time.Second), ChannelVersions: versions}
}

func jv(s string) checkpoint.Value {
	return checkpoint.Value{SerdeType: checkpoint.SerdeJSON, Data: []byte(s)}
}

func put(t *testing.T, s checkpoint.Saver, tid, ns string, c checkpoint.Checkpoint, values map[string]checkpoint.Value) {
	t.Helper()
	if err := s.Put(t.Context(), tid, ns, c, values); err != nil {
		t.Fatalf("Put(%q, %q, %s): %v", tid, ns, c.ID, err)
	}
}

func get(t *testing.T, s checkpoint.Saver, ref checkpoint.Ref) checkpoint.Tuple {
	t.Helper()
	tp, err := s.Get(t.Context(), ref)
	if err != nil {
		t.Fatalf("Get(%+v): %v", ref, err)
	}
	return tp
}

func list(t *testing.T, s checkpoint.Saver, tid, ns string, opts checkpoint.ListOptions) []checkpoint.Tuple {
	t.Helper()
	out, err := s.List(t.Context(), tid, ns, opts)
	if err != nil {
		t.Fatalf("List(%q, %q, %+v): %v", tid, ns, opts, err)
	}
	return out
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v; want %v", err, target)
	}
}

func wantIDs(t *testing.T, got []checkpoint.Tuple, ids ...string) {
	t.Helper()
	var have []string
	for _, tp := range got {
		have = append(have, tp.Checkpoint.ID)
	}
	if strings.Join(have, ",") != strings.Join(ids, ",") {
		t.Fatalf("ids = %v; want %v", have, ids)
	}
}

func wantValues(t *testing.T, tp checkpoint.Tuple, want map[string]string) {
	t.Helper()
	if len(tp.Values) != len(want) {
		t.Fatalf("values of %s = %v; want %v", tp.Checkpoint.ID, tp.Values, want)
	}
	for ch, w := range want {
		v, ok := tp.Values[ch]
		if !ok || v.SerdeType != checkpoint.SerdeJSON || string(v.Data) != w {
			t.Fatalf("value %q of %s = %+v; want %s", ch, tp.Checkpoint.ID, v, w)
		}
	}
}

func wantJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil || fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("json = %s; want %s", got, want)
	}
}
