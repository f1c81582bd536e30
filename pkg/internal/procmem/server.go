package procmem

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Server is a `funcgraph serve` child process of a benchmark, run with GODEBUG=gctrace=1 and
// its output kept, so its memory can be read while it works.
type Server struct {
	// Addr is the loopback address it listens on.
	Addr string

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer // guarded by mu
}

// StartServer starts `bin serve` on a free loopback port, with env added to this process's
// environment, and waits up to 30 s until it listens. Stop ends it.
func StartServer(bin string, env ...string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("pick a port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &Server{Addr: addr, cmd: exec.Command(bin, "serve", "--addr", addr), done: make(chan struct{})}
	s.cmd.Env = append(append(os.Environ(), "GODEBUG=gctrace=1"), env...)
	s.cmd.Stdout, s.cmd.Stderr = s, s
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) || s.Exited() {
			s.Stop()
			return nil, fmt.Errorf("start %s: it did not listen on %s; log:\n%s", bin, addr, s.Tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Write keeps the process's output.
func (s *Server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Write(p)
}

// pid is the process id.
func (s *Server) pid() int { return s.cmd.Process.Pid }

// MB reads a memory field of the process (VmRSS, VmHWM) in MB, -1 when it cannot.
func (s *Server) MB(field string) float64 { return statusMB(s.pid(), field) }

// LiveHeapMB returns the live heap after the process's last GC (see LastLiveHeapMB).
func (s *Server) LiveHeapMB() (mb float64, line string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return lastLiveHeapMB(s.log.String())
}

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Stop ends the process: SIGTERM, then SIGKILL after 10 s.
func (s *Server) Stop() {
	if s.Exited() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Tail returns the last 4 000 bytes of the process's output.
func (s *Server) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.log.String()
	return out[max(0, len(out)-4000):]
}

// BenchSettings reads the settings of a waiting-runs benchmark from the environment: the
// number of runs (FUNCGRAPH_BENCH_WAITING_RUNS, else def) and the funcgraph binary
// (FUNCGRAPH_TEST_HANDLER_BIN, which the make target that runs the benchmark sets).
func BenchSettings(def int, target string) (runs int, bin string, err error) {
	runs = def
	if v := os.Getenv("FUNCGRAPH_BENCH_WAITING_RUNS"); v != "" {
		if runs, err = strconv.Atoi(v); err != nil || runs < 1 {
			return 0, "", fmt.Errorf("FUNCGRAPH_BENCH_WAITING_RUNS=%q: want a positive integer", v)
		}
	}
	if bin = os.Getenv("FUNCGRAPH_TEST_HANDLER_BIN"); bin == "" {
		return 0, "", fmt.Errorf("FUNCGRAPH_TEST_HANDLER_BIN is not set: run through `make %s` (it builds bin/funcgraph)", target)
	}
	return runs, bin, nil
}
