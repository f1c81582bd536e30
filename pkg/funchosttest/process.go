package funchosttest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// ErrHandlerExited reports a handler process that ended before it answered `GET /`.
var ErrHandlerExited = errors.New("funchosttest: handler process exited before it was ready")

// ErrNotReady reports a handler that did not answer `GET /` within InitializationTimeout.
var ErrNotReady = errors.New("funchosttest: handler did not become ready")

// process is a started handler executable.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid after done
}

func (p *process) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("stop handler: killed after 10 s")
	}
}

// worker is one running instance of the handler: an in-process server or a process. The
// host restarts it (a new worker on a new port) when an invocation outlives functionTimeout.
type worker struct {
	url    string
	server *funchost.Server   // in-process handler, or nil
	stopIt context.CancelFunc // ends the in-process server's Serve
	served chan error         // Serve's result
	proc   *process           // handler process, or nil
}

// kill ends the worker at once: SIGKILL for a process; for an in-process handler the server
// and every open connection are closed (its goroutines cannot be killed).
func (w *worker) kill() {
	if w.server != nil {
		_ = w.server.Close()
		w.stopIt()
		<-w.served
	}
	if w.proc != nil {
		_ = w.proc.cmd.Process.Kill()
		<-w.proc.done
	}
}

// stop ends the worker gracefully (Close): Shutdown or SIGTERM, then SIGKILL after 10 s.
func (w *worker) stop() error {
	var errs []error
	if w.server != nil {
		w.stopIt() // Serve shuts down gracefully, within the server's ShutdownTimeout
		if err := <-w.served; err != nil {
			errs = append(errs, fmt.Errorf("close handler: %w", err))
		}
	}
	if w.proc != nil {
		if err := w.proc.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// startHandler serves Options.Handler in-process or starts the handler process, then waits for
// readiness like the host.
func (e *Emulator) startHandler(ctx context.Context) error {
	w, err := e.startWorker(ctx)
	if err != nil {
		return err
	}
	e.wmu.Lock()
	e.w = w
	e.wmu.Unlock()
	return nil
}

// startWorker starts one handler instance on a free port and waits until it is ready; on
// failure nothing is left running.
func (e *Emulator) startWorker(ctx context.Context) (*worker, error) {
	port, ln, err := freePort(e.opts.Handler != nil)
	if err != nil {
		return nil, err
	}
	w := &worker{url: "http://127.0.0.1:" + strconv.Itoa(port)}
	var exited <-chan struct{}
	if e.opts.Handler != nil {
		// As the binary serves its custom handler: on a funchost.Server.
		cfg := e.opts.HandlerServer
		if cfg.ShutdownTimeout == 0 {
			cfg.ShutdownTimeout = 5 * time.Second
		}
		srv, err := funchost.NewServer(cfg, e.opts.Handler,
			slog.New(slog.NewTextHandler(logfWriter(e.logf), &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("handler server: %w", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w.server, w.stopIt, w.served = srv, cancel, make(chan error, 1)
		go func() { w.served <- srv.Serve(ctx, ln) }()
	} else {
		p, err := e.startProcess(port)
		if err != nil {
			return nil, err
		}
		w.proc, exited = p, p.done
	}
	if err := e.waitReady(ctx, w, exited); err != nil {
		w.kill()
		return nil, err
	}
	return w, nil
}

// freePort picks a free loopback port. For an in-process handler the listener is kept open.
func freePort(keep bool) (int, net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, fmt.Errorf("pick port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if !keep {
		_ = ln.Close()
		return port, nil, nil
	}
	return port, ln, nil
}

func (e *Emulator) startProcess(port int) (*process, error) {
	if e.folder.ExecutableErr != nil {
		return nil, fmt.Errorf("start handler: %w", e.folder.ExecutableErr)
	}
	exe, root := e.folder.Executable, e.folder.Root
	args := make([]string, 0, len(e.cfg.Arguments))
	for _, a := range e.cfg.Arguments {
		args = append(args, e.expand(a))
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = root
	if wd := e.cfg.WorkingDirectory; wd != "" {
		if !filepath.IsAbs(wd) {
			wd = filepath.Join(root, wd)
		}
		cmd.Dir = wd
	}
	id := uuid.NewString()
	cmd.Env = make([]string, 0, len(e.folder.Settings)+5)
	for _, k := range slices.Sorted(maps.Keys(e.folder.Settings)) {
		cmd.Env = append(cmd.Env, k+"="+e.folder.Settings[k])
	}
	p := strconv.Itoa(port)
	cmd.Env = append(cmd.Env,
		"FUNCTIONS_CUSTOMHANDLER_PORT="+p, "FUNCTIONS_CUSTOMHANDLER_WORKER_ID="+id,
		"FUNCTIONS_HTTPWORKER_PORT="+p, "FUNCTIONS_HTTPWORKER_ID="+id,
		"FUNCTIONS_APP_ROOT_PATH="+root)
	cmd.Stdout = logWriter{e.logf, "handler stdout"}
	cmd.Stderr = logWriter{e.logf, "handler stderr"}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start handler %s: %w", exe, err)
	}
	proc := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		proc.err = cmd.Wait()
		close(proc.done)
	}()
	return proc, nil
}

var settingRE = regexp.MustCompile(`%([^%]+)%`)

// expand replaces %NAME% with the app setting NAME; unknown names are left as they are.
func (e *Emulator) expand(s string) string { return expandSettings(s, e.folder.Settings) }

// waitReady polls `GET /` every readinessInterval until any HTTP answer, the process exits, or
// InitializationTimeout passes.
func (e *Emulator) waitReady(ctx context.Context, w *worker, exited <-chan struct{}) error {
	limit := e.opts.InitializationTimeout
	if limit <= 0 {
		limit = InitializationTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	probe := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(readinessInterval)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url+"/", nil)
		if err != nil {
			return fmt.Errorf("wait for handler: %w", err)
		}
		if resp, err := probe.Do(req); err == nil {
			_ = resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("wait for handler: %w: %v", ErrHandlerExited, w.proc.err)
		case <-ctx.Done():
			return fmt.Errorf("wait for handler at %s: %w: %v", w.url, ErrNotReady, ctx.Err())
		case <-tick.C:
		}
	}
}

// logWriter sends a process's output lines to Logf.
type logWriter struct {
	logf func(string, ...any)
	what string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.logf("funchosttest: %s: %s", w.what, trimNewline(string(p)))
	return len(p), nil
}

func trimNewline(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
