//go:build integration

package bloblock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// Child processes are this test binary re-run with -test.run=^TestHelperProcess$ and
// these variables; the role selects what the child does.
const (
	envRole      = "FUNCGRAPH_LOCK_HELPER_ROLE"
	envContainer = "FUNCGRAPH_LOCK_HELPER_CONTAINER"
	envDir       = "FUNCGRAPH_LOCK_HELPER_DIR"
	envThread    = "FUNCGRAPH_LOCK_HELPER_THREAD"
	envSeconds   = "FUNCGRAPH_LOCK_HELPER_SECONDS"
	envPeers     = "FUNCGRAPH_LOCK_HELPER_PEERS"
	resultPrefix = "RESULT "
	helperGraph  = "proc-graph"
)

// helperResult is what a child reports on its last stdout line.
type helperResult struct {
	Acquired   int    `json:"acquired"`
	Violations int    `json:"violations"`
	Overlap    bool   `json:"overlap"`
	Err        string `json:"err,omitempty"`
}

// TestHelperProcess is not a test: it is the child side of the cross-process tests, and
// returns at once unless started by one of them.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(envRole)
	if role == "" {
		return
	}
	res := runHelper(role)
	out, _ := json.Marshal(res)
	fmt.Println(resultPrefix + string(out))
	os.Exit(0)
}

func runHelper(role string) helperResult {
	ctx := context.Background()
	c, err := container.NewClientFromConnectionString(os.Getenv(azuritetest.EnvConnectionString), os.Getenv(envContainer), nil)
	if err != nil {
		return helperResult{Err: err.Error()}
	}
	seconds, _ := strconv.Atoi(os.Getenv(envSeconds))
	l, err := New(ctx, Options{Container: c, LeaseDuration: time.Duration(seconds) * time.Second})
	if err != nil {
		return helperResult{Err: err.Error()}
	}
	defer l.Close()
	dir, thread := os.Getenv(envDir), os.Getenv(envThread)
	switch role {
	case "hammer":
		return hammer(ctx, l, dir, thread, 10*time.Second)
	case "parallel":
		return holdTogether(ctx, l, dir, thread)
	case "hold":
		if _, ok, err := l.Acquire(ctx, helperGraph, thread, 0); err != nil || !ok {
			return helperResult{Err: fmt.Sprintf("acquire: ok=%v err=%v", ok, err)}
		}
		fmt.Println("ACQUIRED")
		time.Sleep(time.Minute) // killed long before
		return helperResult{Err: "not killed"}
	}
	return helperResult{Err: "unknown role " + role}
}

// hammer repeatedly takes the shared thread from two goroutines until the deadline. Inside
// the critical section it claims a holder file with O_EXCL (an existing file means two
// holders) and does a slow read-modify-write of a counter file (a lost update means two
// holders).
func hammer(ctx context.Context, l *BlobLeaseThreadLock, dir, thread string, d time.Duration) helperResult {
	holder, counter := filepath.Join(dir, "holder"), filepath.Join(dir, "counter")
	deadline := time.Now().Add(d)
	results := make(chan helperResult, 2)
	for range 2 {
		go func() {
			var r helperResult
			for time.Now().Before(deadline) {
				tok, ok, err := l.Acquire(ctx, helperGraph, thread, 200*time.Millisecond)
				if err != nil {
					r.Err = err.Error()
					break
				}
				if !ok {
					time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
					continue
				}
				f, err := os.OpenFile(holder, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
				if err != nil {
					r.Violations++
				} else {
					f.Close()
				}
				if err := bumpCounter(counter); err != nil {
					r.Err = err.Error()
				}
				if err == nil {
					os.Remove(holder)
				}
				l.Release(helperGraph, thread, tok)
				r.Acquired++
				time.Sleep(time.Duration(5+rand.IntN(20)) * time.Millisecond)
			}
			results <- r
		}()
	}
	var total helperResult
	for range 2 {
		r := <-results
		total.Acquired += r.Acquired
		total.Violations += r.Violations
		if r.Err != "" {
			total.Err = r.Err
		}
	}
	return total
}

func bumpCounter(path string) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	time.Sleep(2 * time.Millisecond) // widen the window a second holder would hit
	return os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o600)
}

// holdTogether takes its own thread, marks it held in a file, and waits until every peer
// has done the same: all peers holding different threads at once.
func holdTogether(ctx context.Context, l *BlobLeaseThreadLock, dir, thread string) helperResult {
	tok, ok, err := l.Acquire(ctx, helperGraph, thread, 5*time.Second)
	if err != nil || !ok {
		return helperResult{Err: fmt.Sprintf("acquire %s: ok=%v err=%v", thread, ok, err)}
	}
	defer l.Release(helperGraph, thread, tok)
	if err := os.WriteFile(filepath.Join(dir, "held-"+thread), nil, 0o600); err != nil {
		return helperResult{Err: err.Error()}
	}
	peers, _ := strconv.Atoi(os.Getenv(envPeers))
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		m, _ := filepath.Glob(filepath.Join(dir, "held-*"))
		if len(m) == peers {
			return helperResult{Acquired: 1, Overlap: true}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return helperResult{Acquired: 1}
}

// startHelper starts a child in role with the given thread; its env carries the container.
func startHelper(t *testing.T, role, containerName, dir, thread string, extra ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		envRole+"="+role, envContainer+"="+containerName, envDir+"="+dir, envThread+"="+thread)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// readResult scans a child's stdout for its result line.
func readResult(t *testing.T, sc *bufio.Scanner) helperResult {
	t.Helper()
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			var r helperResult
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("helper result %q: %v", line, err)
			}
			return r
		}
	}
	t.Fatalf("helper exited without a result: %v", sc.Err())
	return helperResult{}
}

func TestIntegrationBlobLease_CrossProcess_MutualExclusion(t *testing.T) {
	t.Parallel()
	_, name := newAzuriteContainer(t)
	dir := t.TempDir()
	var scanners []*bufio.Scanner
	for range 2 {
		_, sc := startHelper(t, "hammer", name, dir, "shared", envSeconds+"=15")
		scanners = append(scanners, sc)
	}
	var total int
	for i, sc := range scanners {
		r := readResult(t, sc)
		t.Logf("process %d: %d acquisitions, %d violations", i, r.Acquired, r.Violations)
		if r.Err != "" {
			t.Errorf("process %d: %s", i, r.Err)
		}
		if r.Violations != 0 {
			t.Errorf("process %d saw another holder %d times", i, r.Violations)
		}
		if r.Acquired == 0 {
			t.Errorf("process %d never acquired the lock", i)
		}
		total += r.Acquired
	}
	b, err := os.ReadFile(filepath.Join(dir, "counter"))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(string(b)); n != total {
		t.Errorf("counter = %d, acquisitions = %d: updates were lost to overlapping holders", n, total)
	}
}

func TestIntegrationBlobLease_CrossProcess_DifferentThreadsInParallel(t *testing.T) {
	t.Parallel()
	_, name := newAzuriteContainer(t)
	dir := t.TempDir()
	const peers = 3
	var scanners []*bufio.Scanner
	for i := range peers {
		_, sc := startHelper(t, "parallel", name, dir, fmt.Sprintf("thread-%d", i),
			envSeconds+"=15", envPeers+"="+strconv.Itoa(peers))
		scanners = append(scanners, sc)
	}
	for i, sc := range scanners {
		r := readResult(t, sc)
		if r.Err != "" || !r.Overlap {
			t.Errorf("process %d: overlap=%v err=%q; want all threads held at once", i, r.Overlap, r.Err)
		}
	}
}

func TestIntegrationBlobLease_CrossProcess_CrashedHolderExpires(t *testing.T) {
	t.Parallel()
	c, name := newAzuriteContainer(t)
	const lease = 15 * time.Second
	// The lease starts after started and before the holder's ACQUIRED is read (Azurite
	// under load can answer the acquire seconds after it granted it), so it expires
	// between started+lease and acquired+lease.
	started := time.Now()
	cmd, sc := startHelper(t, "hold", name, t.TempDir(), "crash", envSeconds+"=15")
	for sc.Scan() && sc.Text() != "ACQUIRED" {
		if strings.HasPrefix(sc.Text(), resultPrefix) {
			t.Fatalf("holder did not acquire: %s", sc.Text())
		}
	}
	if sc.Err() != nil {
		t.Fatalf("read holder output: %v", sc.Err())
	}
	acquired := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill holder: %v", err)
	}
	_ = cmd.Wait()

	l := newAzuriteLock(t, c, Options{})
	var tok string
	var attempts int
	for time.Since(acquired) < lease+10*time.Second {
		var ok bool
		var err error
		tok, ok, err = l.Acquire(t.Context(), helperGraph, "crash", 0)
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		attempts++
		if ok {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	took, sinceStart := time.Since(acquired), time.Since(started)
	t.Logf("acquired %v after the holder reported its lease, %v after it started (%d attempts)",
		took.Round(time.Millisecond), sinceStart.Round(time.Millisecond), attempts)
	if tok == "" {
		t.Fatalf("lock not acquired %v after the holder was killed", took)
	}
	defer l.Release(helperGraph, "crash", tok)
	// Not before expiry (a 250 ms allowance for rounding), and promptly after.
	if sinceStart < lease-250*time.Millisecond {
		t.Errorf("acquired %v after the holder started, before its %v lease could expire", sinceStart, lease)
	}
	if took > lease+3*time.Second {
		t.Errorf("acquired only after %v; the lease expired by %v", took, lease)
	}
}
