package launch

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// App is what a Builder returns: the routes, and optionally background work that runs while
// the binary serves.
type App struct {
	// FunctionApp holds every route of the app. Required.
	FunctionApp *funchost.FunctionApp
	// Start, if set, starts background work (an embedded durable engine's dispatcher). It is
	// called once, after the server's handler is built and before the listener opens, and
	// must return promptly; the work runs until Close.
	Start func(ctx context.Context) error
	// Close, if set, stops the background work and releases resources. It runs after the
	// server stopped, and also when building or starting failed after the Builder returned.
	Close func() error
}

func (a *App) start(ctx context.Context) error {
	if a.Start == nil {
		return nil
	}
	return a.Start(ctx)
}

func (a *App) close() error {
	if a.Close == nil {
		return nil
	}
	return a.Close()
}

// Builder builds the app from the settings Main read. It must not start goroutines: building
// only to write function.json folders runs nothing.
type Builder func(ctx context.Context, s Settings) (*App, error)

// Options configure Run. Main fills them from the process.
type Options struct {
	// Args are the command-line arguments without the program name.
	Args []string
	// Getenv reads a setting; nil means os.Getenv.
	Getenv func(string) string
	// Logger is the process logger; nil means one built from FUNCGRAPH_LOG_LEVEL on stderr.
	Logger *slog.Logger
	// OnListen, if set, is called with the bound address once the server listens.
	OnListen func(net.Addr)
	// Program names the binary in usage messages and is the default executable name of the
	// stage and hostjson subcommands; "" means the base name of os.Args[0].
	Program string
	// Stdout receives what a command prints for the user (the version); nil means os.Stdout.
	Stdout io.Writer
}

// usage is the message for a missing or unknown subcommand.
const usage = "usage: %[1]s serve [--addr host:port] | %[1]s stage [--target local|publish] [--out dir] [--exe name] [--binary path] [--proxying=false] | " +
	"%[1]s functions [--out dir] | %[1]s hostjson [--out path] [--exe name] [--proxying=false] | %[1]s --version"

// Main runs the binary: it calls Run with the process's arguments and environment, stops on
// SIGTERM or interrupt, and exits with status 1 when Run fails.
func Main(build Builder) {
	getenv := os.Getenv
	logger := newLogger(os.Stderr, getenv)
	slog.SetDefault(logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := Run(ctx, build, Options{Args: os.Args[1:], Getenv: getenv, Logger: logger})
	stop()
	if err != nil {
		logger.Error("funcgraph stopped", "error", err)
		os.Exit(1)
	}
}

// Run runs one command of the binary until ctx ends (serving) or the command is done.
// `--version` (also -version or version) prints Version, the Go version and the binary's
// module and VCS revision, and returns without reading any setting or building the app.
func Run(ctx context.Context, build Builder, opts Options) error {
	if len(opts.Args) > 0 && isVersionArg(opts.Args[0]) {
		out := opts.Stdout
		if out == nil {
			out = os.Stdout
		}
		info, ok := debug.ReadBuildInfo()
		if _, err := io.WriteString(out, versionText(info, ok)); err != nil {
			return fmt.Errorf("print the version: %w", err)
		}
		return nil
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Logger == nil {
		opts.Logger = newLogger(os.Stderr, opts.Getenv)
	}
	if opts.Program == "" {
		opts.Program = programName()
	}
	logger := opts.Logger
	if port := opts.Getenv(envCustomHandlerPort); port != "" {
		return serve(ctx, build, opts, ModeCustomHandler, net.JoinHostPort("127.0.0.1", port), 0, func(a *App) (http.Handler, error) {
			limit, err := bodyLimitFromEnv(opts.Getenv)
			if err != nil {
				return nil, err
			}
			// host.json is in the working directory, the app root: it says whether the host
			// proxies requests, and the functionTimeout a proxied answer must end within.
			proxying, timeout := hostJSONForHandler("host.json")
			return a.FunctionApp.CustomHandler(funchost.HandlerOptions{Logger: logger, MaxRequestBodyBytes: limit,
				Proxying: proxying, FunctionTimeout: timeout}), nil
		})
	}
	if len(opts.Args) == 0 {
		return fmt.Errorf(usage, opts.Program)
	}
	switch opts.Args[0] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		addr := fs.String("addr", "127.0.0.1:7071", "listen address")
		if err := fs.Parse(opts.Args[1:]); err != nil {
			return err
		}
		maxConns, err := maxConnectionsFromEnv(opts.Getenv)
		if err != nil {
			return err
		}
		return serve(ctx, build, opts, ModeServe, *addr, maxConns, func(a *App) (http.Handler, error) {
			keys, err := loadKeys(opts.Getenv)
			if err != nil {
				return nil, err
			}
			if keys.Empty() {
				logger.Warn("no function keys configured: function-level routes answer 401; set " +
					envFunctionKey + " (and " + envMasterKey + ") or " + envKeysFile)
			}
			limit, err := bodyLimitFromEnv(opts.Getenv)
			if err != nil {
				return nil, err
			}
			return a.FunctionApp.Standalone(funchost.StandaloneOptions{Keys: keys, Logger: logger, MaxRequestBodyBytes: limit}), nil
		})
	case "functions", "hostjson", "stage":
		return fileCommand(ctx, build, opts)
	default:
		return fmt.Errorf("unknown subcommand %q: %s", opts.Args[0], fmt.Sprintf(usage, opts.Program))
	}
}

// fileCommand runs a subcommand that builds the app only to write files: `functions`,
// `hostjson` or `stage`. Nothing is started.
func fileCommand(ctx context.Context, build Builder, opts Options) error {
	a, s, err := buildApp(ctx, build, opts, ModeFunctions)
	if err != nil {
		return err
	}
	args := opts.Args[1:]
	switch opts.Args[0] {
	case "functions":
		fs := flag.NewFlagSet("functions", flag.ContinueOnError)
		out := fs.String("out", "functions", "output folder")
		if err = fs.Parse(args); err == nil {
			err = a.FunctionApp.WriteFunctions(*out)
		}
	case "hostjson":
		err = hostJSONCommand(a, args, opts.Program)
	default:
		err = stageCommand(a, s, args, opts.Program)
	}
	return errors.Join(err, a.close(), s.Close())
}

// buildApp reads the settings for mode and builds the app. On error nothing is left open.
func buildApp(ctx context.Context, build Builder, opts Options, mode Mode) (*App, Settings, error) {
	if err := checkWorkQueueEnv(opts.Getenv); err != nil {
		return nil, Settings{}, err
	}
	s, err := FromEnv(ctx, opts.Getenv, mode, opts.Logger)
	if err != nil {
		return nil, Settings{}, err
	}
	a, err := build(ctx, s)
	if err != nil {
		return nil, Settings{}, errors.Join(err, s.Close())
	}
	if a == nil || a.FunctionApp == nil {
		return nil, Settings{}, errors.Join(errors.New("launch: the builder returned no FunctionApp"), s.Close())
	}
	return a, s, nil
}

// serve builds the app, starts its background work, and serves handler(app) on addr until ctx
// ends; then the server drains and the app closes. maxConns, when not 0, caps the connections
// held open (connLimit).
func serve(ctx context.Context, build Builder, opts Options, mode Mode, addr string, maxConns int, handler func(*App) (http.Handler, error)) error {
	logger := opts.Logger
	cfg, err := serverConfigFromEnv(opts.Getenv)
	if err != nil {
		return err
	}
	a, s, err := buildApp(ctx, build, opts, mode)
	if err != nil {
		return err
	}
	closeAll := func() error { return errors.Join(a.close(), s.Close()) }
	if err := checkAppSettings(a.FunctionApp, opts.Getenv, mode); err != nil {
		return errors.Join(err, closeAll())
	}
	if err := checkThreadLock(a.FunctionApp, s); err != nil {
		return errors.Join(err, closeAll())
	}
	h, err := handler(a)
	if err != nil {
		return errors.Join(err, closeAll())
	}
	if err := a.start(ctx); err != nil {
		return errors.Join(fmt.Errorf("start app: %w", err), closeAll())
	}
	var limit *connLimit
	if maxConns > 0 {
		limit = newConnLimit(maxConns, logger)
		cfg.ConnState = limit.connState
	}
	srv, err := funchost.NewServer(cfg, h, logger)
	if err != nil {
		return errors.Join(fmt.Errorf("serve: %w", err), closeAll())
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.Join(fmt.Errorf("serve: listen %s: %w", addr, err), closeAll())
	}
	logger.Info("listening", "addr", ln.Addr().String(), "api", "http://"+ln.Addr().String()+"/"+a.FunctionApp.RoutePrefix())
	if opts.OnListen != nil {
		opts.OnListen(ln.Addr())
	}
	if limit != nil {
		ln = limit.listener(ln)
	}
	return errors.Join(srv.Serve(ctx, ln), closeAll())
}
