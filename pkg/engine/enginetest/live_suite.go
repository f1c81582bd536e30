package enginetest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// LiveSuiteOptions tunes RunLiveStoreTests. The zero value tests the engine's limits.
type LiveSuiteOptions struct {
	// MaxAppends is the append limit of the stores under test (0: engine.MaxLiveAppends). A
	// backend whose appends are network calls lowers it with its own option, so the suite
	// reaches the limit in a few calls instead of 50 000; its limit must still be enforced by
	// the same code path as the default one.
	MaxAppends int
}

// RunLiveStoreTests runs the engine.LiveStore conformance suite. newLiveStore returns the
// store under test for each subtest; the suite uses fresh keys for every subtest, so the
// stores it returns may share storage.
func RunLiveStoreTests(t *testing.T, newLiveStore func(t *testing.T) engine.LiveStore, opts LiveSuiteOptions) {
	t.Helper()
	if opts.MaxAppends == 0 {
		opts.MaxAppends = engine.MaxLiveAppends
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s engine.LiveStore)
	}{
		{"AppendRead_RoundTripsByOffset", liveRoundTrip},
		{"AppendRead_CopiesData", liveCopies},
		{"Append_NotAtLength_Conflict", liveConflict},
		{"Append_MissingLogPastZero_NotFound", liveMissingAppend},
		{"Append_TwoWritersOneOffset_OneWins", liveRace},
		{"Read_AtEnd_EmptyPastEnd_Invalid", liveReadBounds},
		{"ReadLength_Missing_NotFound", liveMissing},
		{"Limits_Rejected", liveLimits},
		{"Append_PastMaxAppends_TooLarge", func(t *testing.T, s engine.LiveStore) { liveAppendCount(t, s, opts.MaxAppends) }},
		{"DeletePrefix_DeletesOnlyPrefix", liveDeletePrefix},
		{"ConcurrentAppenders_EveryRecordOnceInOrder", func(t *testing.T, s engine.LiveStore) { liveConcurrent(t, s, opts.MaxAppends) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newLiveStore(t))
		})
	}
}

// liveKey returns a fresh key of a run's live log.
func liveKey() string { return UniqueKey("run") + "/1/live" }

func mustAppend(t *testing.T, s engine.LiveStore, key string, at int64, data string) int64 {
	t.Helper()
	n, err := s.Append(ctxOf(t), key, at, []byte(data))
	if err != nil {
		t.Fatalf("Append(%s, %d, %q): %v", key, at, data, err)
	}
	if want := at + int64(len(data)); n != want {
		t.Fatalf("Append(%s, %d, %q) = %d, want %d", key, at, data, n, want)
	}
	return n
}

// mustRead reads the whole log key.
func mustRead(t *testing.T, s engine.LiveStore, key string) string {
	t.Helper()
	data, n, err := s.Read(ctxOf(t), key, 0, engine.MaxLiveBytes)
	if err != nil {
		t.Fatalf("Read(%s): %v", key, err)
	}
	if int64(len(data)) != n {
		t.Fatalf("Read(%s) from 0 returned %d bytes of a log of %d", key, len(data), n)
	}
	return string(data)
}

func liveRoundTrip(t *testing.T, s engine.LiveStore) {
	key := liveKey()
	at := mustAppend(t, s, key, 0, "hello")
	at = mustAppend(t, s, key, at, ", live")
	at = mustAppend(t, s, key, at, " world")
	const want = "hello, live world"
	if got := mustRead(t, s, key); got != want {
		t.Fatalf("log = %q, want %q", got, want)
	}
	if n, err := s.Length(ctxOf(t), key); err != nil || n != int64(len(want)) || n != at {
		t.Fatalf("Length = %d, %v; want %d", n, err, len(want))
	}
	for _, r := range []struct {
		from int64
		max  int
		want string
	}{{0, 5, "hello"}, {3, 4, "lo, "}, {7, 100, "live world"}, {16, 1, "d"}} {
		data, n, err := s.Read(ctxOf(t), key, r.from, r.max)
		if err != nil || string(data) != r.want || n != int64(len(want)) {
			t.Errorf("Read(%d, %d) = %q, %d, %v; want %q, %d", r.from, r.max, data, n, err, r.want, len(want))
		}
	}
}

func liveCopies(t *testing.T, s engine.LiveStore) {
	key := liveKey()
	data := []byte("original")
	if _, err := s.Append(ctxOf(t), key, 0, data); err != nil {
		t.Fatal(err)
	}
	data[0] = 'X'
	got, _, err := s.Read(ctxOf(t), key, 0, 100)
	if err != nil || string(got) != "original" {
		t.Fatalf("Read = %q, %v: the store keeps the caller's slice", got, err)
	}
	got[0] = 'Y'
	if again := mustRead(t, s, key); again != "original" {
		t.Fatalf("log = %q: the store shares its memory with a reader", again)
	}
}

func liveConflict(t *testing.T, s engine.LiveStore) {
	key := liveKey()
	at := mustAppend(t, s, key, 0, "abc")
	for _, bad := range []int64{0, 2, at + 1, at + 100} {
		if _, err := s.Append(ctxOf(t), key, bad, []byte("zz")); !errors.Is(err, engine.ErrConflict) {
			t.Errorf("Append at %d of a log of %d: err = %v, want ErrConflict", bad, at, err)
		}
	}
	if got := mustRead(t, s, key); got != "abc" {
		t.Fatalf("log = %q after refused appends, want %q", got, "abc")
	}
	mustAppend(t, s, key, at, "d")
}

func liveMissingAppend(t *testing.T, s engine.LiveStore) {
	key := liveKey()
	if _, err := s.Append(ctxOf(t), key, 5, []byte("x")); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Append at 5 of no log: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Length(ctxOf(t), key); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Length after a refused append: err = %v, want ErrNotFound (no log created)", err)
	}
}

// liveRace starts two writers at the same offset, a fresh log's 0 and then a grown log's end,
// several times: exactly one wins each round, and the log holds its data alone.
func liveRace(t *testing.T, s engine.LiveStore) {
	const rounds = 5
	for round := range rounds {
		key := liveKey()
		var at int64
		if round%2 == 1 {
			at = mustAppend(t, s, key, 0, "base|")
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			errs  [2]error
		)
		for w := range 2 {
			wg.Go(func() {
				<-start
				_, errs[w] = s.Append(ctxOf(t), key, at, []byte(fmt.Sprintf("writer-%d", w)))
			})
		}
		close(start)
		wg.Wait()
		won := -1
		for w, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: both writers appended at %d", round, at)
			case err == nil:
				won = w
			case !errors.Is(err, engine.ErrConflict):
				t.Fatalf("round %d: writer %d: err = %v, want nil or ErrConflict", round, w, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: neither writer appended at %d: %v", round, at, errs)
		}
		want := fmt.Sprintf("writer-%d", won)
		if at > 0 {
			want = "base|" + want
		}
		if got := mustRead(t, s, key); got != want {
			t.Fatalf("round %d: log = %q, want %q", round, got, want)
		}
	}
}

func liveReadBounds(t *testing.T, s engine.LiveStore) {
	key := liveKey()
	at := mustAppend(t, s, key, 0, "0123456789")
	data, n, err := s.Read(ctxOf(t), key, at, 100)
	if err != nil || len(data) != 0 || n != at {
		t.Fatalf("Read at the end = %q, %d, %v; want no bytes, %d, nil", data, n, err, at)
	}
	for _, r := range []struct {
		from int64
		max  int
	}{{at + 1, 10}, {-1, 10}, {0, 0}, {0, -1}} {
		if _, _, err := s.Read(ctxOf(t), key, r.from, r.max); !errors.Is(err, engine.ErrInvalidQuery) {
			t.Errorf("Read(%d, %d) of a log of %d: err = %v, want ErrInvalidQuery", r.from, r.max, at, err)
		}
	}
}

func liveMissing(t *testing.T, s engine.LiveStore) {
	key := liveKey()
	if _, _, err := s.Read(ctxOf(t), key, 0, 10); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Read of no log: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Length(ctxOf(t), key); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Length of no log: err = %v, want ErrNotFound", err)
	}
}

func liveLimits(t *testing.T, s engine.LiveStore) {
	key := liveKey()
	for _, c := range []struct {
		name string
		key  string
		at   int64
		data []byte
	}{{"empty key", "", 0, []byte("x")}, {"bad key", "run/x/", 0, []byte("x")}, {"empty data", key, 0, nil}, {"negative offset", key, -1, []byte("x")}} {
		if _, err := s.Append(ctxOf(t), c.key, c.at, c.data); !errors.Is(err, engine.ErrInvalidEntity) {
			t.Errorf("%s: err = %v, want ErrInvalidEntity", c.name, err)
		}
	}
	if _, err := s.DeletePrefix(ctxOf(t), ""); !errors.Is(err, engine.ErrInvalidEntity) {
		t.Errorf("empty prefix: err = %v, want ErrInvalidEntity", err)
	}
	var le *engine.LimitError
	_, err := s.Append(ctxOf(t), key, 0, make([]byte, engine.MaxLiveAppendBytes+1))
	if !errors.Is(err, engine.ErrTooLarge) || !errors.As(err, &le) || le.Limit != "live append" {
		t.Errorf("append of %d bytes: err = %v, want a live append *LimitError", engine.MaxLiveAppendBytes+1, err)
	}
	if _, err := s.Length(ctxOf(t), key); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a refused first append created the log: Length err = %v", err)
	}
	at, err := s.Append(ctxOf(t), key, 0, bytes.Repeat([]byte("x"), engine.MaxLiveAppendBytes))
	if err != nil || at != engine.MaxLiveAppendBytes {
		t.Fatalf("append of exactly %d bytes = %d, %v", engine.MaxLiveAppendBytes, at, err)
	}
	// A log only grows by appends at its length, so one that would end past MaxLiveBytes is
	// refused for its offset and size, before the log is asked.
	_, err = s.Append(ctxOf(t), key, engine.MaxLiveBytes-1, []byte("xy"))
	if !errors.Is(err, engine.ErrTooLarge) || !errors.As(err, &le) || le.Limit != "live log" {
		t.Errorf("append ending past %d bytes: err = %v, want a live log *LimitError", engine.MaxLiveBytes, err)
	}
	if _, err := s.Append(ctxOf(t), key, engine.MaxLiveBytes-1, []byte("x")); errors.Is(err, engine.ErrTooLarge) {
		t.Errorf("append ending at %d bytes: err = %v, want no limit (a conflict)", engine.MaxLiveBytes, err)
	}
}

func liveAppendCount(t *testing.T, s engine.LiveStore, maxAppends int) {
	key := liveKey()
	var at int64
	for range maxAppends {
		n, err := s.Append(ctxOf(t), key, at, []byte{'.'})
		if err != nil {
			t.Fatalf("append %d of %d: %v", at+1, maxAppends, err)
		}
		at = n
	}
	var le *engine.LimitError
	_, err := s.Append(ctxOf(t), key, at, []byte{'!'})
	if !errors.Is(err, engine.ErrTooLarge) || !errors.As(err, &le) || le.Limit != "live appends" {
		t.Fatalf("append %d: err = %v, want a live appends *LimitError", maxAppends+1, err)
	}
	if _, err := s.Append(ctxOf(t), key, 0, []byte{'!'}); !errors.Is(err, engine.ErrTooLarge) {
		t.Fatalf("append at 0 of a full log: err = %v, want ErrTooLarge (a full log refuses at any offset)", err)
	}
	if n, err := s.Length(ctxOf(t), key); err != nil || n != int64(maxAppends) {
		t.Fatalf("Length = %d, %v after a refused append; want %d", n, err, maxAppends)
	}
}

func liveDeletePrefix(t *testing.T, s engine.LiveStore) {
	run := UniqueKey("run")
	keys := []string{run + "/1/live", run + "/1/live-b", run + "/2/live", run + "x/1/live"}
	for _, k := range keys {
		mustAppend(t, s, k, 0, k)
	}
	n, err := s.DeletePrefix(ctxOf(t), run+"/1/")
	if err != nil || n != 2 {
		t.Fatalf("DeletePrefix = %d, %v; want 2", n, err)
	}
	for i, k := range keys {
		_, err := s.Length(ctxOf(t), k)
		if gone := errors.Is(err, engine.ErrNotFound); gone != (i < 2) {
			t.Errorf("%s: gone=%v after deleting prefix %s/1/", k, gone, run)
		}
	}
	if n, err := s.DeletePrefix(ctxOf(t), run+"/9/"); err != nil || n != 0 {
		t.Errorf("DeletePrefix of nothing = %d, %v", n, err)
	}
	// A deleted log starts afresh at 0.
	mustAppend(t, s, keys[0], 0, "again")
	if got := mustRead(t, s, keys[0]); got != "again" {
		t.Errorf("recreated log = %q", got)
	}
}

// liveConcurrent has writers append their own records to one log, each retrying at the
// log's new length after a conflict; record sizes come from a seeded source. Every record
// ends up in the log once, each writer's in its order, and the log is exactly their bytes.
// The records fit in maxAppends appends.
func liveConcurrent(t *testing.T, s engine.LiveStore, maxAppends int) {
	const writers = 4
	records := min(8, maxAppends/writers)
	key := liveKey()
	rng := rand.New(rand.NewPCG(41, 7))
	sizes := make([][]int, writers)
	for w := range sizes {
		for range records {
			sizes[w] = append(sizes[w], 1+rng.IntN(200))
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			<-start
			var at int64
			for r := range records {
				rec := fmt.Sprintf("w%d:%d:%s\n", w, r, strings.Repeat("x", sizes[w][r]))
				for {
					n, err := s.Append(ctxOf(t), key, at, []byte(rec))
					if err == nil {
						at = n
						break
					}
					if !errors.Is(err, engine.ErrConflict) {
						errs[w] = fmt.Errorf("writer %d record %d: %w", w, r, err)
						return
					}
					if at, err = s.Length(ctxOf(t), key); err != nil && !errors.Is(err, engine.ErrNotFound) {
						errs[w] = fmt.Errorf("writer %d: length: %w", w, err)
						return
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	total := 0
	for line := range strings.SplitSeq(strings.TrimSuffix(mustRead(t, s, key), "\n"), "\n") {
		var w, r int
		var body string
		if _, err := fmt.Sscanf(line, "w%d:%d:%s", &w, &r, &body); err != nil || w < 0 || w >= writers {
			t.Fatalf("record %q: %v", line, err)
		}
		if r != next[w] || len(body) != sizes[w][r] {
			t.Fatalf("writer %d: record %d of %d bytes where record %d was due", w, r, len(body), next[w])
		}
		next[w]++
		total++
	}
	if total != writers*records {
		t.Fatalf("log holds %d records, want %d", total, writers*records)
	}
}
