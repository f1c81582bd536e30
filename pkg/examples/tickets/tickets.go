// Package tickets is the example app's own trigger: a queue-triggered function that starts a
// durable run for every message on a "tickets" queue, with the message as the run's input, so
// that a ticketing system (or anything that can write to an Azure Storage queue) starts
// triage runs without calling HTTP. A redelivered message starts no second run: the run's
// instance id is made from the message's id, and the start refuses an id that holds a run
// (engine.StartRunRequest.NoReplace).
//
// It is the recipe of docs/triggers.md, complete; copy it for a trigger of your own (a queue
// of another name, another graph, the input built from the message).
package tickets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// Defaults of Options.
const (
	// DefaultFunction is the function's name (its folder in the staged app).
	DefaultFunction = "tickets_triage"
	// DefaultGraph is the graph a ticket starts: content_classifier, which sorts a text into
	// question, complaint or feedback and drafts the reply.
	DefaultGraph = "content_classifier"
	// InstancePrefix starts the instance id of every run a ticket starts.
	InstancePrefix = "ticket-"
)

// Options configures Register.
type Options struct {
	// Runs starts the runs (the app's engine). Required.
	Runs engine.Runs
	// QueueName is the queue the function listens on. Required.
	QueueName string
	// Connection names the app setting of the queue's storage account ("" means
	// AzureWebJobsStorage).
	Connection string
	// Function is the function's name; "" means DefaultFunction.
	Function string
	// Graph is the graph each message starts; "" means DefaultGraph.
	Graph string
	// Logger receives what each message started; nil means slog.Default().
	Logger *slog.Logger
}

// Validate reports a missing engine or queue name.
func (o Options) Validate() error {
	switch {
	case o.Runs == nil:
		return errors.New("tickets: Options.Runs is required")
	case o.QueueName == "":
		return errors.New("tickets: Options.QueueName is required")
	}
	return nil
}

// InstanceID is the instance id of the run the message with this id starts.
func InstanceID(messageID string) string { return InstancePrefix + messageID }

// Register adds the queue-triggered function to app. Under the Functions host each message
// on opts.QueueName is one invocation, which starts a run of opts.Graph with the message's
// JSON object as its input and answers once the run is stored (the engine's own work queue
// runs it). An invocation fails, and the host delivers the message again (after
// host.json's queues.visibilityTimeout, at most queues.maxDequeueCount times, then moving it
// to "<queue>-poison"), when the start could not be stored, and when the message is not a
// start the graph accepts (not a JSON object, a state the graph refuses): such a message ends
// in the poison queue, where an operator finds it. Under `serve` no queue trigger runs.
func Register(app *funchost.FunctionApp, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.Function == "" {
		opts.Function = DefaultFunction
	}
	if opts.Graph == "" {
		opts.Graph = DefaultGraph
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &handler{opts: opts, log: opts.Logger.With("component", "tickets", "graph", opts.Graph)}
	err := app.HandleQueue(funchost.QueueFunction{Name: opts.Function, QueueName: opts.QueueName, Connection: opts.Connection, Handler: h.handle})
	if err != nil {
		return fmt.Errorf("register %s: %w", opts.Function, err)
	}
	return nil
}

// handler starts a run per message.
type handler struct {
	opts Options
	log  *slog.Logger
}

// messageMeta is the metadata of a run a message started: where it came from.
type messageMeta struct {
	Trigger   string `json:"trigger"`
	Queue     string `json:"queue"`
	MessageID string `json:"message_id"`
}

// handle starts the message's run. A run that the id holds already is the run an earlier
// delivery of the message started: the message is done with.
func (h *handler) handle(ctx context.Context, msg funchost.QueueMessage) (funchost.Outputs, error) {
	if msg.ID == "" {
		return nil, errors.New("tickets: a message without an id: its run could not be told from a redelivery's")
	}
	id := InstanceID(msg.ID)
	meta, err := json.Marshal(messageMeta{Trigger: "queue", Queue: h.opts.QueueName, MessageID: msg.ID})
	if err != nil {
		return nil, fmt.Errorf("tickets: encode metadata: %w", err)
	}
	_, err = h.opts.Runs.StartRun(ctx, engine.StartRunRequest{GraphName: h.opts.Graph, InstanceID: id, Input: msg.Body, Metadata: meta, NoReplace: true})
	var exists *engine.RunExistsError
	switch {
	case err == nil:
		h.log.InfoContext(ctx, "ticket started a run", "run_id", id, "message_id", msg.ID, "dequeue_count", msg.DequeueCount)
		return nil, nil
	case errors.As(err, &exists):
		h.log.InfoContext(ctx, "ticket delivered again: its run exists", "run_id", id, "message_id", msg.ID, "runtime_status", string(exists.Status), "dequeue_count", msg.DequeueCount)
		return nil, nil
	}
	h.log.WarnContext(ctx, "ticket could not start its run; the host delivers it again", "run_id", id, "message_id", msg.ID, "dequeue_count", msg.DequeueCount, "error", err.Error())
	return nil, fmt.Errorf("tickets: start run %s: %w", id, err)
}
