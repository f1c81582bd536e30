package launch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobcheckpoint"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablethreads"
	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// EnvStorage is the storage connection string the Functions host also uses; its
// identity-based variants are EnvStorage + "__accountName" and the others azure.SettingsFrom
// reads. Unset, every store is in process memory.
const EnvStorage = "AzureWebJobsStorage"

// EnvStoragePrefix names the durable engine's table, queue and containers: <prefix>runs,
// <prefix>-work, <prefix>-payloads, <prefix>-live (default prefix "funcgraph"). The queue
// trigger's function.json reads the work queue's name from FUNCGRAPH_WORK_QUEUE, which must
// agree.
const EnvStoragePrefix = "FUNCGRAPH_STORAGE_PREFIX"

// envVisibilityTimeout is how long a received work item stays hidden from other workers of
// the embedded dispatcher (Go duration; default engine.DefaultVisibilityTimeout). A worker
// renews it while a step runs, so it bounds how soon a crashed worker's item is redelivered.
const envVisibilityTimeout = "FUNCGRAPH_VISIBILITY_TIMEOUT"

// envReceiveOnStart turns off, with "off", a start's own receive of a work item under the
// Functions host (engine.Options.ReceiveOnStart; on by default there).
const envReceiveOnStart = "FUNCGRAPH_RECEIVE_ON_START"

// defaultStoragePrefix is the default of EnvStoragePrefix.
const defaultStoragePrefix = "funcgraph"

// Mode is how the binary runs.
type Mode int

const (
	// ModeServe is `serve`: the standalone server.
	ModeServe Mode = iota
	// ModeCustomHandler is under the Azure Functions host.
	ModeCustomHandler
	// ModeFunctions is `functions`: the app is built only to write function.json folders.
	ModeFunctions
)

// Names are the storage names derived from the prefix.
type Names struct {
	// Prefix is the validated prefix.
	Prefix string
	// RunsTable holds run heads, history, inboxes and the run index.
	RunsTable string
	// WorkQueue carries the engine's work items (the queue trigger's queue).
	WorkQueue string
	// PayloadContainer holds values too large for a table property.
	PayloadContainer string
	// LiveContainer holds the runs' live channels, one append blob a log.
	LiveContainer string
	// ThreadsTable holds the platform API's threads.
	ThreadsTable string
	// CheckpointContainer holds hosted graphs' checkpoints.
	CheckpointContainer string
}

// namesFor derives the storage names of prefix: lowercase letters and digits, starting with
// a letter, at most 24 characters.
func namesFor(prefix string) (Names, error) {
	if prefix == "" {
		prefix = defaultStoragePrefix
	}
	ok := len(prefix) <= 24 && prefix[0] >= 'a' && prefix[0] <= 'z'
	for i := 0; ok && i < len(prefix); i++ {
		c := prefix[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
	}
	if !ok {
		return Names{}, fmt.Errorf("%s: want 1-24 lowercase letters and digits starting with a letter", EnvStoragePrefix)
	}
	return Names{
		Prefix: prefix, RunsTable: prefix + "runs", WorkQueue: prefix + "-work",
		PayloadContainer: prefix + "-payloads", LiveContainer: prefix + "-live",
		ThreadsTable: prefix + "threads", CheckpointContainer: prefix + "-checkpoints",
	}, nil
}

// Durable is the durable engine's storage: the Azure backends when AzureWebJobsStorage is
// configured (and the binary is not only writing function.json folders), otherwise the
// in-memory twins, which lose every run on restart.
type Durable struct {
	// Store holds the runs: heads, history, inboxes and the run index.
	Store engine.Store
	// Queue carries the engine's work items.
	Queue engine.WorkQueue
	// Payloads holds values too large for a table property.
	Payloads engine.PayloadStore
	// Live holds the runs' live channels (the logs a step writes while it runs).
	Live engine.LiveStore
	// LiveFlushInterval is the engine's LiveFlushInterval (0: its default, 100 ms, for Azure,
	// where an append is a billed request): in memory memoryLiveFlush, an append costing
	// nothing, so a reader in the process sees a chunk within a millisecond.
	LiveFlushInterval time.Duration
	// Azure reports whether these are the Azure backends.
	Azure bool
	// QueueName is the work queue's name, for the queue trigger.
	QueueName string
	// EmbeddedDispatcher reports whether the app should run the engine's own dispatcher
	// (Engine.Start): always, except under the Functions host with Azure storage, where the
	// host's queue trigger delivers the work items and the process runs no background work.
	EmbeddedDispatcher bool
	// VisibilityTimeout is FUNCGRAPH_VISIBILITY_TIMEOUT (0: the engine's default).
	VisibilityTimeout time.Duration
	// StepLease is the engine's StepLease (0: its default): under the Functions host, the
	// functionTimeout of the host.json in the working directory (stepLeaseFrom).
	StepLease time.Duration
	// ReceiveOnStart is the engine's ReceiveOnStart: under the Functions host a start receives
	// one work item itself, so its first step does not wait for the queue trigger's polling
	// back-off; FUNCGRAPH_RECEIVE_ON_START=off turns it off.
	ReceiveOnStart bool
	// Retention is what FUNCGRAPH_RETENTION and FUNCGRAPH_MEMORY_MAX_RUNS say (retention.go):
	// on Azure nothing by default; in memory the newest 1 000 finished runs.
	Retention engine.Retention
}

// memoryLiveFlush is the in-memory stores' LiveFlushInterval.
const memoryLiveFlush = 2 * time.Millisecond

// EngineOptions returns opts with the storage (the runs' live channels included), the
// visibility timeout, the step lease and the retention filled in (those three when opts leaves
// them zero), and ReceiveOnStart set when d sets it.
func (d Durable) EngineOptions(opts engine.Options) engine.Options {
	opts.Store, opts.Queue, opts.Payloads, opts.Live = d.Store, d.Queue, d.Payloads, d.Live
	if opts.LiveFlushInterval == 0 {
		opts.LiveFlushInterval = d.LiveFlushInterval
	}
	if opts.VisibilityTimeout == 0 {
		opts.VisibilityTimeout = d.VisibilityTimeout
	}
	if opts.StepLease == 0 {
		opts.StepLease = d.StepLease
	}
	opts.ReceiveOnStart = opts.ReceiveOnStart || d.ReceiveOnStart
	if opts.Retention == (engine.Retention{}) {
		opts.Retention = d.Retention
	}
	return opts
}

// openStorage opens the storage az describes (AzureWebJobsStorage: a connection string, or
// the identity-based AzureWebJobsStorage__* settings): from one set of clients, the durable
// engine's table, queue, payload and live containers, the platform's thread table and the
// checkpoint container, each created if missing. Without storage, or when only writing
// function.json folders, the engine gets the in-memory twins and the other stores stay nil.
func openStorage(ctx context.Context, getenv func(string) string, mode Mode, az azure.Settings, s *Settings) error {
	names, err := namesFor(strings.TrimSpace(getenv(EnvStoragePrefix)))
	if err != nil {
		return err
	}
	s.Names = names
	var visibility time.Duration
	if v := strings.TrimSpace(getenv(envVisibilityTimeout)); v != "" {
		if visibility, err = time.ParseDuration(v); err != nil || visibility < time.Second {
			return fmt.Errorf("%s: want a duration of at least 1s", envVisibilityTimeout)
		}
	}
	inMemory := mode == ModeFunctions || !az.Configured()
	retention, err := retentionFromEnv(getenv, !inMemory)
	if err != nil {
		return err
	}
	if inMemory {
		b, err := budgetFromEnv(getenv)
		if err != nil {
			return err
		}
		s.MemoryBudget = b
		s.Durable = Durable{
			Store: memory.NewStore(memory.WithBudget(b)), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(memory.WithBudget(b)),
			Live: memory.NewLiveStore(memory.WithBudget(b)), LiveFlushInterval: memoryLiveFlush,
			QueueName: names.WorkQueue, EmbeddedDispatcher: true, VisibilityTimeout: visibility,
			Retention: retention,
		}
		s.Threads = threads.NewLimitedMemory(threads.MemoryOptions{Budget: b})
		s.Checkpoints = checkpoint.NewMemory(checkpoint.MemoryOptions{Budget: b})
		if mode != ModeFunctions {
			l := b.Limits()
			s.Logger.Info("storage: process memory", "memory_budget_bytes", l.Total, "memory_budget_per_identity_bytes", l.PerIdentity)
		}
		return nil
	}
	clients, err := azure.NewClients(az, azureOptions)
	if err != nil {
		return fmt.Errorf("durable storage: %w", err)
	}
	store, err := tablestore.Open(ctx, clients, names.RunsTable)
	if err != nil {
		return fmt.Errorf("durable storage: %w", err)
	}
	queue, err := queuestore.Open(ctx, clients, names.WorkQueue)
	if err != nil {
		return fmt.Errorf("durable storage: %w", err)
	}
	payloads, err := blobstore.Open(ctx, clients, names.PayloadContainer)
	if err != nil {
		return fmt.Errorf("durable storage: %w", err)
	}
	live, err := blobstore.OpenLive(ctx, clients, names.LiveContainer, nil)
	if err != nil {
		return fmt.Errorf("durable storage: %w", err)
	}
	threads, err := tablethreads.Open(ctx, clients, tablethreads.Options{Table: names.ThreadsTable, Logger: s.Logger})
	if err != nil {
		return fmt.Errorf("thread storage: %w", err)
	}
	checkpoints, err := blobcheckpoint.Open(ctx, clients, blobcheckpoint.Options{Container: names.CheckpointContainer, Logger: s.Logger})
	if err != nil {
		return fmt.Errorf("checkpoint storage: %w", err)
	}
	s.Azure, s.Threads, s.Checkpoints = clients, threads, checkpoints
	s.Durable = Durable{
		Store: store, Queue: queue, Payloads: payloads, Live: live,
		Azure: true, QueueName: names.WorkQueue, EmbeddedDispatcher: mode != ModeCustomHandler,
		VisibilityTimeout: visibility, Retention: retention,
	}
	if !s.Durable.EmbeddedDispatcher {
		// The host's queue trigger delivers the work items: a handling lives at most
		// functionTimeout, so a step's hold older than that was left by a dead worker.
		s.Durable.StepLease = stepLeaseFrom("host.json")
		switch v := strings.TrimSpace(getenv(envReceiveOnStart)); v {
		case "", "on":
			s.Durable.ReceiveOnStart = true
		case "off":
		default:
			return fmt.Errorf("%s: want on or off, not %q", envReceiveOnStart, v)
		}
	}
	s.Logger.Info("durable storage: Azure", "table", names.RunsTable, "queue", names.WorkQueue,
		"container", names.PayloadContainer, "live_container", names.LiveContainer, "embedded_dispatcher", s.Durable.EmbeddedDispatcher,
		"retention", retention.MaxAge.String(), "step_lease", s.Durable.StepLease.String(),
		"receive_on_start", s.Durable.ReceiveOnStart)
	s.Logger.Info("platform storage: Azure", "threads_table", names.ThreadsTable, "checkpoint_container", names.CheckpointContainer)
	return nil
}
