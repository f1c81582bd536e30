package launch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/bloblock"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// Settings read from the environment (app settings under the Functions host). FromEnv is the
// only reader.
const (
	// envCustomHandlerPort is set by the Functions host: serve the custom handler protocol.
	envCustomHandlerPort = "FUNCTIONS_CUSTOMHANDLER_PORT"
	// envLogLevel is the log level: debug, info (default), warn or error.
	envLogLevel = "FUNCGRAPH_LOG_LEVEL"
	// envLockBackend is GRAPH_LOCK_BACKEND: "" or "inprocess" (default), or "distributed".
	envLockBackend = "GRAPH_LOCK_BACKEND"
	// envLockContainer names the blob container of the distributed lock.
	envLockContainer = "FUNCGRAPH_LOCK_CONTAINER"
	// envFunctionKey is a host-level function key for `serve`.
	envFunctionKey = "FUNCGRAPH_FUNCTION_KEY"
	// envMasterKey is the master key for `serve`.
	envMasterKey = "FUNCGRAPH_MASTER_KEY"
	// envKeysFile is a keys file for `serve` (format of funchost.LoadKeysFile).
	envKeysFile = "FUNCGRAPH_KEYS_FILE"
	// envTraceExporter selects an OpenTelemetry exporter for apps that offer one ("" off,
	// "stdout" in the example app).
	envTraceExporter = "FUNCGRAPH_TRACE_EXPORTER"
)

// errDistributedNeedsStorage is the fail-fast error for a distributed lock without storage.
var errDistributedNeedsStorage = errors.New(envLockBackend + "=distributed needs the " + EnvStorage +
	" connection string (a storage account or UseDevelopmentStorage=true for Azurite); set it or unset " + envLockBackend)

// Settings is what the entrypoint hands a Builder.
type Settings struct {
	// Logger is the process logger.
	Logger *slog.Logger
	// LockBackend is the GRAPH_LOCK_BACKEND setting as given; pass it to
	// host.Options.LockBackendSetting so a mismatch fails fast.
	LockBackend string
	// ThreadLock is the distributed thread lock when LockBackend is "distributed" (a Blob
	// lease lock on the AzureWebJobsStorage account, opened from the same clients as the
	// stores), nil otherwise (the hosting app's in-process lock). The entrypoint closes it
	// after the app.
	ThreadLock lock.ThreadLock
	// Mode is how the binary runs.
	Mode Mode
	// TraceExporter is FUNCGRAPH_TRACE_EXPORTER, for the app to interpret.
	TraceExporter string
	// Getenv reads the app's own settings, those launch does not interpret (a model vendor's
	// key and endpoint): the entrypoint's reader of the environment. Never nil after FromEnv.
	Getenv func(string) string
	// MaxWait is FUNCGRAPH_MAX_WAIT (a Go duration below the Azure front end's 230 s cut):
	// how long a route waits for a graph run; 0 means the hosting app's default. Assemble
	// passes it to host.Options.MaxWait.
	MaxWait time.Duration
	// Names are the storage names (FUNCGRAPH_STORAGE_PREFIX).
	Names Names
	// Durable is the durable engine's storage.
	Durable Durable
	// Threads is the platform routes' thread store on Azure Table storage (table
	// Names.ThreadsTable) when AzureWebJobsStorage is configured and the app serves;
	// otherwise an in-memory store on MemoryBudget (threads.NewLimitedMemory).
	Threads threads.Store
	// Checkpoints is a checkpointer of hosted graphs on Azure Blob storage (container
	// Names.CheckpointContainer) when AzureWebJobsStorage is configured and the app serves;
	// otherwise an in-memory checkpointer on MemoryBudget.
	Checkpoints checkpoint.Saver
	// MemoryBudget is the byte budget of the in-memory stores (the durable engine's, Threads
	// and Checkpoints) when AzureWebJobsStorage is not configured, from
	// FUNCGRAPH_MEMORY_BUDGET and FUNCGRAPH_MEMORY_BUDGET_PER_IDENTITY (budget.go); nil on
	// Azure Storage. Give it to any other in-memory store the app keeps. Assemble hands it to
	// the hosting routes, the platform routes and the runs API, which refuse new work it has
	// no room for before reading the request's body.
	MemoryBudget *membudget.Budget
	// ResponseBudget counts what the answers of every surface hold while they are sent, per
	// identity and in total, and bounds their open event streams, from
	// FUNCGRAPH_RESPONSE_BUDGET, FUNCGRAPH_RESPONSE_BUDGET_PER_IDENTITY,
	// FUNCGRAPH_RESPONSE_MAX_BYTES, FUNCGRAPH_MAX_STREAMS and
	// FUNCGRAPH_MAX_STREAMS_PER_IDENTITY (responses.go). Assemble hands it to the hosting
	// routes, which the platform routes and the runs API share it from: one budget for the
	// server, whatever surface an answer comes from.
	ResponseBudget *respbudget.Budget
	// Azure holds the storage account's clients when AzureWebJobsStorage is configured and
	// the app serves (nil otherwise): every store above and the thread lock are opened from
	// them, and the app may open its own Azure stores from them too.
	Azure *azure.Clients
	// Isolation is per-user isolation (FUNCGRAPH_USER_ISOLATION and its companions, see
	// isolation.go); nil means off. Assemble hands it to the hosting routes, the platform
	// routes and the runs API.
	Isolation *isolation.Isolation

	closers []func() error
}

// Close releases what FromEnv opened (the distributed lock). Run calls it after the app's Close.
func (s Settings) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	return errors.Join(errs...)
}

// FromEnv reads the settings for mode. Storage: EnvStorage (or its identity-based variants)
// and EnvStoragePrefix; in ModeFunctions it opens no storage. Thread lock:
// GRAPH_LOCK_BACKEND=distributed opens a Blob lease lock on the AzureWebJobsStorage account
// (container FUNCGRAPH_LOCK_CONTAINER, default funcgraph-locks, created if missing), through
// the same clients as the stores, so a connection string and identity-based settings both
// work. Other values are left for the hosting app to check.
func FromEnv(ctx context.Context, getenv func(string) string, mode Mode, logger *slog.Logger) (Settings, error) {
	if logger == nil {
		logger = slog.Default()
	}
	s := Settings{Logger: logger, LockBackend: getenv(envLockBackend), Mode: mode, TraceExporter: strings.TrimSpace(getenv(envTraceExporter)),
		Getenv: getenv}
	var err error
	if s.MaxWait, err = maxWaitFromEnv(getenv); err != nil {
		return Settings{}, err
	}
	if s.Isolation, err = isolationFromEnv(getenv, mode, logger); err != nil {
		return Settings{}, err
	}
	if s.ResponseBudget, err = responseBudgetFromEnv(getenv); err != nil {
		return Settings{}, err
	}
	az := azure.SettingsFrom(EnvStorage, getenv)
	if err := openStorage(ctx, getenv, mode, az, &s); err != nil {
		return Settings{}, err
	}
	if strings.ToLower(strings.TrimSpace(s.LockBackend)) == "distributed" {
		l, err := openLock(ctx, getenv, az, s.Azure, logger)
		if err != nil {
			return Settings{}, err
		}
		s.ThreadLock = l
		s.closers = append(s.closers, l.Close)
	}
	return s, nil
}

// openLock opens the Blob lease lock on the storage account of az, from clients when the
// stores were opened (nil: the lock builds the clients itself, as when only writing
// function.json folders).
func openLock(ctx context.Context, getenv func(string) string, az azure.Settings, clients *azure.Clients, logger *slog.Logger) (*bloblock.BlobLeaseThreadLock, error) {
	if !az.Configured() {
		return nil, errDistributedNeedsStorage
	}
	if clients == nil {
		var err error
		if clients, err = azure.NewClients(az, azureOptions); err != nil {
			return nil, fmt.Errorf("open distributed thread lock: %w", err)
		}
	}
	container := cmp.Or(getenv(envLockContainer), bloblock.DefaultContainer)
	l, err := bloblock.Open(ctx, clients, container, bloblock.Options{Logger: logger.With("component", "lock")})
	if err != nil {
		return nil, fmt.Errorf("open distributed thread lock: %w", err)
	}
	logger.Info("thread lock: blob leases", "container", container)
	return l, nil
}

// loadKeys reads the standalone server's keys: FUNCGRAPH_KEYS_FILE, plus FUNCGRAPH_FUNCTION_KEY
// (a host-level function key named "default") and FUNCGRAPH_MASTER_KEY, which win over the
// file.
func loadKeys(getenv func(string) string) (funchost.Keys, error) {
	var keys funchost.Keys
	if path := getenv(envKeysFile); path != "" {
		k, err := funchost.LoadKeysFile(path)
		if err != nil {
			return keys, err
		}
		keys = k
	}
	if v := getenv(envFunctionKey); v != "" {
		if keys.HostFunction == nil {
			keys.HostFunction = map[string]string{}
		}
		keys.HostFunction["default"] = v
	}
	if v := getenv(envMasterKey); v != "" {
		keys.Master = v
	}
	return keys, nil
}

// newLogger returns a text logger on w at the level of FUNCGRAPH_LOG_LEVEL (info when unset
// or unknown).
func newLogger(w io.Writer, getenv func(string) string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(getenv(envLogLevel))); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}
