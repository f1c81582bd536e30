package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
)

// LocalRuns keeps streams within MaxStreamBytes: the streams of the oldest finished runs go
// first; a chunk that still does not fit is refused and nothing changes.
func TestLocalRuns_StreamBound(t *testing.T) {
	l := NewLocalRuns(execFunc(func(context.Context, Run) (RunStatus, error) { return RunSuccess, nil }), LocalRunsOptions{MaxStreamBytes: 100})
	t.Cleanup(func() { _ = l.Close() })
	ctx := t.Context()
	chunks := map[string]StreamChunks{}
	for _, id := range []string{"r1", "r2", "r3"} {
		if err := l.Submit(ctx, Run{RunID: id, ThreadID: "t-" + id}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Join(ctx, "t-"+id, id); err != nil {
			t.Fatal(err)
		}
		c, err := l.RunStream(ctx, "t-"+id, id)
		if err != nil {
			t.Fatal(err)
		}
		chunks[id] = c
	}
	put := func(id string, n, size int) error {
		return chunks[id].PutChunk(ctx, n, bytes.Repeat([]byte("x"), size))
	}
	if err := put("r1", 0, 40); err != nil {
		t.Fatal(err)
	}
	if err := put("r2", 0, 40); err != nil {
		t.Fatal(err)
	}
	if err := put("r3", 0, 40); err != nil { // r1's stream goes
		t.Fatal(err)
	}
	if _, err := chunks["r1"].Chunk(ctx, 0); !errors.Is(err, ErrChunkNotFound) {
		t.Fatalf("r1's chunk after r3's: %v; want dropped", err)
	}
	if got, err := chunks["r2"].Chunk(ctx, 0); err != nil || len(got) != 40 {
		t.Fatalf("r2's chunk: %d bytes, %v", len(got), err)
	}
	if err := put("r3", 1, 61); err == nil || !errors.Is(err, ErrStreamStoreFull) {
		t.Fatalf("a chunk past the bound with r2 dropped: %v; want ErrStreamStoreFull", err)
	}
	if _, err := chunks["r3"].Chunk(ctx, 1); !errors.Is(err, ErrChunkNotFound) {
		t.Fatalf("refused chunk: %v; want not stored", err)
	}
	if err := put("r3", 3, 1); err == nil {
		t.Fatal("a chunk after a missing one was stored")
	}
	if err := put("r3", 1, 60); err != nil {
		t.Fatalf("a chunk that fits once r2's stream is dropped: %v", err)
	}
	if _, err := l.RunStream(ctx, "t-r1", "nope"); !errors.Is(err, ErrRunNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
}

type execFunc func(context.Context, Run) (RunStatus, error)

func (f execFunc) ExecuteRun(ctx context.Context, run Run) (RunStatus, error) { return f(ctx, run) }

// A join sends each frame once, whichever source it reads (stored chunks, then the live log
// from its start), resumes after Last-Event-ID, and sends a frame without id (an error) only
// when it comes after the resume point.
func TestFollower_SendsEachFrameOnce(t *testing.T) {
	frames := func(text string) []frame {
		fs, err := parseFrames([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	stored := frames("id: 1\nevent: metadata\ndata: {}\n\nid: 2\nevent: values\ndata: 2\n\nevent: error\ndata: {}\n\n")
	live := frames("id: 1\nevent: metadata\ndata: {}\n\nid: 2\nevent: values\ndata: 2\n\nevent: error\ndata: {}\n\nid: 3\nevent: values\ndata: 3\n\nevent: end\ndata: null\n\n")
	for _, tc := range []struct {
		name  string
		after int64
		want  string
	}{
		{"from the start", 0, "id: 1\nevent: metadata\ndata: {}\n\nid: 2\nevent: values\ndata: 2\n\nevent: error\ndata: {}\n\nid: 3\nevent: values\ndata: 3\n\nevent: end\ndata: null\n\n"},
		{"after 1", 1, "id: 2\nevent: values\ndata: 2\n\nevent: error\ndata: {}\n\nid: 3\nevent: values\ndata: 3\n\nevent: end\ndata: null\n\n"},
		{"after 2", 2, "event: error\ndata: {}\n\nid: 3\nevent: values\ndata: 3\n\nevent: end\ndata: null\n\n"},
		{"after 3", 3, "event: end\ndata: null\n\n"},
	} {
		w := httptest.NewRecorder()
		f := &follower{s: &Service{responses: respbudget.New(respbudget.Limits{})}, j: &joinRequest{after: tc.after}, w: w, rc: http.NewResponseController(w)}
		if f.send(stored) {
			t.Fatalf("%s: the stored frames have no end", tc.name)
		}
		f.it = pass{}
		if !f.send(live) {
			t.Fatalf("%s: the live frames' end was not met", tc.name)
		}
		if got := w.Body.String(); got != tc.want {
			t.Errorf("%s: %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// FuzzParseFrames: frames written by appendFrame parse back to themselves; any input either
// parses into frames that rebuild it or is refused.
func FuzzParseFrames(f *testing.F) {
	f.Add(int64(1), "values", []byte(`{"a": 1}`), []byte("event: end\ndata: null\n\n"))
	f.Add(int64(0), "error", []byte(`{"error": "x"}`), []byte("id: x\n\n"))
	f.Fuzz(func(t *testing.T, id int64, event string, data, raw []byte) {
		if id >= 0 && !bytes.ContainsAny([]byte(event), "\n\r") && event != "" && !bytes.Contains(data, []byte("\n")) {
			text := appendFrame(nil, id, event, data)
			fs, err := parseFrames(text)
			if err != nil || len(fs) != 1 || fs[0].id != id || fs[0].event != event || !bytes.Equal(fs[0].text, text) {
				t.Fatalf("round trip of %q: %+v, %v", text, fs, err)
			}
		}
		fs, err := parseFrames(raw)
		if err != nil {
			return
		}
		var back []byte
		for _, fr := range fs {
			back = append(back, fr.text...)
		}
		if !bytes.Equal(back, raw) {
			t.Fatalf("frames of %q rebuild %q", raw, back)
		}
	})
}

// memChunks is a StreamChunks in a slice, counting writes.
type memChunks struct {
	mu     sync.Mutex
	chunks [][]byte
}

func (m *memChunks) RunStream(context.Context, string, string) (StreamChunks, error) { return m, nil }

func (m *memChunks) PutChunk(_ context.Context, n int, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n != len(m.chunks) {
		return fmt.Errorf("chunk %d written after %d", n, len(m.chunks))
	}
	m.chunks = append(m.chunks, data)
	return nil
}

func (m *memChunks) Chunk(_ context.Context, n int) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n >= len(m.chunks) {
		return nil, ErrChunkNotFound
	}
	return m.chunks[n], nil
}

func (m *memChunks) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.chunks)
}

// A stream is stored a chunk per flush delay for its first timedChunks chunks, then only in
// full chunks and at the end, so a join reads a bounded number of chunks; the chunks hold
// every frame once, in order.
func TestRunLog_ChunksBounded(t *testing.T) {
	defer func(d time.Duration) { flushDelay = d }(flushDelay)
	flushDelay = time.Millisecond
	store := &memChunks{}
	s := &Service{runs: struct {
		RunBackend
		*memChunks
	}{nil, store}, maxStream: 1 << 20, logger: slog.New(slog.DiscardHandler), live: map[string]*runLog{}}
	l := s.openRunLog(t.Context(), Run{RunID: "r", ThreadID: "t", Request: RunRequest{StreamMode: "values"}})
	want := "id: 1\nevent: metadata\ndata: {\"run_id\": \"r\"}\n\n"
	for i := range timedChunks + 10 {
		if err := l.emit("values", map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
		want += fmt.Sprintf("id: %d\nevent: values\ndata: {\"i\": %d}\n\n", i+2, i)
		for i < timedChunks && store.count() < i+1 {
			runtime.Gosched()
		}
		if i >= timedChunks {
			time.Sleep(5 * flushDelay) // time for a timed write, which must not come
		}
	}
	if s.liveLog("r") != l {
		t.Fatal("the running log is not the run's live log")
	}
	s.closeRunLog(l)
	want += endFrame
	if n := store.count(); n != timedChunks+1 {
		t.Fatalf("%d chunks; want %d timed ones and the last", n, timedChunks+1)
	}
	if got := string(bytes.Join(store.chunks, nil)); got != want {
		t.Fatalf("chunks hold %q\nwant %q", got, want)
	}
	if s.liveLog("r") != nil {
		t.Fatal("a closed log is still live")
	}
}
