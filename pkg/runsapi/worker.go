package runsapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// Worker functions: under the Azure Functions host, the host's queue trigger delivers the
// engine's work items one at a time, and a timer trigger runs the engine's periodic repair.
const (
	// funcOrchestrator is the queue-triggered function that runs work items.
	funcOrchestrator = "fg_orchestrator"
	// funcRepair is the timer-triggered function that runs the repair pass.
	funcRepair = "fg_repair"
	// DefaultRepairSchedule runs the repair pass every five minutes (NCRONTAB, seconds first).
	DefaultRepairSchedule = "0 */5 * * * *"
)

// Worker is what the worker functions need of the engine (engine.Engine implements it).
type Worker interface {
	// HandleWorkItem runs one delivery of a work item. nil means the item is done with
	// (including an item whose step kept killing its worker and failed its run); an error
	// asks for redelivery.
	HandleWorkItem(ctx context.Context, body []byte, dequeueCount int64) error
	// Sweep runs one repair pass (the due index and the work queue's poison queue) and
	// returns how many runs it dispatched.
	Sweep(ctx context.Context) (int, error)
}

// WorkerOptions configures RegisterWorker.
type WorkerOptions struct {
	// Worker runs the work items. Required.
	Worker Worker
	// QueueName is the work queue the engine enqueues to. Required.
	QueueName string
	// Connection names the app setting of the storage account ("" means AzureWebJobsStorage).
	Connection string
	// RepairSchedule is the repair timer's NCRONTAB schedule (default DefaultRepairSchedule).
	RepairSchedule string
	// Logger receives failures; nil means slog.Default().
	Logger *slog.Logger
}

// Validate reports a missing worker or queue name.
func (o WorkerOptions) Validate() error {
	if o.Worker == nil {
		return errors.New("runsapi: WorkerOptions.Worker is required")
	}
	if o.QueueName == "" {
		return errors.New("runsapi: WorkerOptions.QueueName is required")
	}
	return nil
}

// RegisterWorker adds the worker functions to app: fg_orchestrator, a queue trigger on
// opts.QueueName whose every invocation runs one work item, and fg_repair, a timer trigger
// running the repair pass.
//
// A work item whose handling fails (storage unreachable) fails its invocation, and the host
// makes the message visible again after host.json's queues.visibilityTimeout, the back-off
// between deliveries, until queues.maxDequeueCount; then it moves the message to
// "<queue>-poison". Neither counts against the run: the engine counts the starts of a step on
// the run itself and fails a run only when its step keeps killing its worker
// (engine.Options.MaxStepStarts, independent of maxDequeueCount). The repair pass reads
// "<queue>-poison" and puts each message whose run still needs it back on the work queue, so
// an outage longer than maxDequeueCount × visibilityTimeout delays runs by at most one repair
// period after it ends; it never strands them.
func RegisterWorker(app *funchost.FunctionApp, opts WorkerOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	schedule := opts.RepairSchedule
	if schedule == "" {
		schedule = DefaultRepairSchedule
	}
	w := opts.Worker
	err := app.HandleQueue(funchost.QueueFunction{
		Name: funcOrchestrator, QueueName: opts.QueueName, Connection: opts.Connection,
		Handler: func(ctx context.Context, msg funchost.QueueMessage) (funchost.Outputs, error) {
			if err := w.HandleWorkItem(ctx, msg.Body, msg.DequeueCount); err != nil {
				logger.WarnContext(ctx, "work item failed; the host redelivers it", "message_id", msg.ID, "dequeue_count", msg.DequeueCount, "error", err.Error())
				return nil, fmt.Errorf("run work item: %w", err)
			}
			return nil, nil
		},
	})
	if err != nil {
		return fmt.Errorf("register %s: %w", funcOrchestrator, err)
	}
	err = app.HandleTimer(funchost.TimerFunction{
		Name: funcRepair, Schedule: schedule,
		Handler: func(ctx context.Context, _ funchost.TimerInfo) (funchost.Outputs, error) {
			n, err := w.Sweep(ctx)
			if err != nil {
				return nil, fmt.Errorf("repair runs: %w", err)
			}
			if n > 0 {
				logger.InfoContext(ctx, "repair pass dispatched runs", "runs", n)
			}
			return nil, nil
		},
	})
	if err != nil {
		return fmt.Errorf("register %s: %w", funcRepair, err)
	}
	return nil
}
