package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Fixed internal names of the durable runtime. History rows and logs name the step kind
// with them. They are funcgraph's own, not the Python durable package's (docs/lineage.md).
const (
	OrchestratorName = "fg_orchestrator"
	ExecuteNodeName  = "fg_execute_node"
	ResolveRouteName = "fg_resolve_route"
	ApplyEventName   = "fg_apply_event"
)

// RunStatus is a run's runtime status. The names follow Durable Functions.
type RunStatus string

// Run statuses. ContinuedAsNew, Canceled and Suspended are reserved and never produced.
const (
	StatusPending    RunStatus = "Pending"
	StatusRunning    RunStatus = "Running"
	StatusCompleted  RunStatus = "Completed"
	StatusFailed     RunStatus = "Failed"
	StatusTerminated RunStatus = "Terminated"
)

// Finished reports whether the status is terminal (Completed, Failed or Terminated).
func (s RunStatus) Finished() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusTerminated
}

// Valid reports whether s is one of the five statuses.
func (s RunStatus) Valid() bool {
	switch s {
	case StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusTerminated:
		return true
	}
	return false
}

// RunInput is the orchestration input echoed as `input` in a run's status. Key order on the
// wire: graph_name, graph_hash, initial_state, current_node, metadata.
type RunInput struct {
	// GraphName is the graph the run was started on.
	GraphName string `json:"graph_name"`
	// GraphHash is the graph version the run is pinned to.
	GraphHash string `json:"graph_hash"`
	// InitialState is the start's input, the run's first state.
	InitialState json.RawMessage `json:"initial_state"`
	// CurrentNode is always null over HTTP: runs start at the entrypoint.
	CurrentNode *string `json:"current_node"`
	// Metadata is the start's metadata, stored and echoed.
	Metadata json.RawMessage `json:"metadata"`
}

// Run is a run's status as the HTTP API reports it.
type Run struct {
	// InstanceID is the run's id.
	InstanceID string
	// RuntimeStatus is the run's runtime status.
	RuntimeStatus RunStatus
	// CustomStatus is null while Pending; then the 4-key object of the current visit, or 6
	// keys while waiting for an event. A run whose graph version is
	// not registered on the process that picked it up has two keys more, Pending included:
	// "waiting_for_version" (the graph hash) and "message" (see Run.WaitingForVersion).
	CustomStatus json.RawMessage
	// Input echoes what the run was started with.
	Input RunInput
	// Output is {graph_name, graph_version, graph_hash, final_node, state} when Completed, the
	// failure string when Failed, the reason string when Terminated, else null.
	Output json.RawMessage
	// GraphName, GraphVersion and GraphHash name the graph version the run is pinned to.
	GraphName, GraphVersion, GraphHash string
	// Group is the run's StartRunRequest.Group ("" for none).
	Group string
	// SearchKeys are the run's search keys (searchkeys.go): name → value, nil for none.
	SearchKeys map[string]string
	// CreatedAt is when the run was started, UpdatedAt when it last changed.
	CreatedAt, UpdatedAt time.Time
	// ParentInstanceID is the run that started this one as its child run
	// (durable.StartChild); "" for a run started otherwise.
	ParentInstanceID string
	// ChildInstanceIDs are the child runs this run started, oldest first: the first
	// MaxListedChildren of them (its history names every one). Only GetRun fills it; a
	// listing leaves it nil.
	ChildInstanceIDs []string
	// SleepingUntil is when a Running run's durable sleep (durable.Sleep) ends, its next node
	// running from then on; zero when it does not sleep, or the wake-up has passed by the
	// engine's clock. Only GetRun fills it (run_activity.go).
	SleepingUntil time.Time
	// NodeRetry is the next attempt of a Running run's current node, whose last attempt failed,
	// while its back-off is ahead; nil otherwise. Only GetRun fills it.
	NodeRetry *NodeRetry
	// Generation counts the run's continues as new (durable.ContinueAsNew): 0 for a run that
	// never continued, one more at each (continue.go).
	Generation int64
	// Step counts the steps the run committed in its current generation. It does not change
	// while the run waits for an event, also once the event is stored: with the event's name
	// it names one wait, so a surface that answers waits can key its answers by it
	// (WithIdempotencyKey) and a retry of an answer is stored once.
	Step int64
	// BranchRetries are the branches of the run's open fan-out waiting to retry a failed
	// attempt, by index, at most MaxListedBranchRetries. Only GetRunDetail fills it.
	BranchRetries []BranchRetry
}

// StartRunRequest asks for a new run of the latest registration of GraphName.
type StartRunRequest struct {
	// GraphName names the graph to run.
	GraphName string
	// InstanceID is the run id; empty means a new UUID4.
	InstanceID string
	// Input becomes the initial state (a JSON object; empty means {}).
	Input json.RawMessage
	// Metadata is stored and echoed (a JSON object; empty means {}). The engine reads one
	// member: a string "owner" (MetadataOwnerKey) that passes ValidOwner files the run under
	// that owner in the run index, so that RunQuery.Owner lists it (owner.go).
	Metadata json.RawMessage
	// Group files the run under a group of the caller's choosing (a conversation, a thread),
	// so that RunQuery.Group lists the group's runs at the cost of what it returns (group.go).
	// Empty: none. A group follows the rule of instance ids (ValidGroup).
	Group string
	// NoReplace refuses the start when the id holds a run, a finished one too
	// (*RunExistsError with its status), where a start otherwise replaces a finished run. The
	// run's head is inserted, so two such starts of one id store one run whatever their
	// timing: what a trigger keyed by a message id needs, whose redelivery must start nothing.
	NoReplace bool
	// SearchKeys are keys the run is found by (RunQuery.Keys), besides those the graph
	// declares (durable.ManifestBuilder.SearchKeys), whose values they replace for the same
	// name: name → value, each within ValidSearchKeyName and ValidSearchKeyValue, at most
	// MaxSearchKeys in all. Empty: none but the declared ones.
	SearchKeys map[string]string
}

// RunQuery filters and pages ListRuns. Zero fields do not filter.
type RunQuery struct {
	// GraphName keeps the runs of one graph.
	GraphName string
	// GraphHash keeps the runs pinned to one version of their graph (16 hex digits).
	GraphHash string
	// Status keeps the runs with this status.
	Status RunStatus
	// CreatedAfter and CreatedBefore keep the runs created from CreatedAfter on and before
	// CreatedBefore, within MinCreatedFilter..MaxCreatedFilter.
	CreatedAfter, CreatedBefore time.Time
	// Group keeps the runs started with this StartRunRequest.Group. A group's runs have
	// partitions of their own, so such a listing reads the group's runs only (group.go). A
	// group no run can have (ValidGroup) lists nothing.
	Group string
	// Owner keeps the runs whose metadata names this owner (MetadataOwnerKey). An owner's runs
	// have partitions of their own, so such a listing reads the owner's runs only, and its
	// pages and tokens never stem from another owner's (owner.go). Runs started before the
	// run index kept owners are not listed by owner. An owner no run can have (ValidOwner)
	// lists nothing.
	Owner string
	// Keys keeps the runs with every one of these search keys (StartRunRequest.SearchKeys,
	// and the graph's declared ones): name → value. Such a listing reads the partition of
	// its first key in name order only (searchkeys.go), whatever the number of other runs; a
	// key no run can have (CheckSearchKeys) lists nothing.
	Keys map[string]string
	// Unfinished keeps the runs that are Pending or Running. It excludes Status.
	Unfinished bool
	// OldestFirst lists oldest first instead of newest first. Only with Group (and no Keys), and with
	// Unfinished or Status Pending or Running: a group's unfinished runs are kept in creation
	// order, so its oldest unfinished run is the first row of one query.
	OldestFirst bool
	// Limit is the page size (default 100, at most 1000).
	Limit int
	// ContinuationToken continues a previous page; treat it as opaque.
	ContinuationToken string
}

// Bounds of RunQuery.CreatedAfter and CreatedBefore: the run index keeps creation times as
// nanoseconds after the Unix epoch in an int64, so a bound outside them cannot be compared.
var (
	MinCreatedFilter = time.Unix(0, 1).UTC()
	MaxCreatedFilter = time.Unix(0, math.MaxInt64).UTC()
)

// validate reports a non-zero CreatedAfter or CreatedBefore outside MinCreatedFilter and
// MaxCreatedFilter, Unfinished with a Status, and OldestFirst without Group, without an
// unfinished filter or with Keys (ErrInvalidQuery).
func (q RunQuery) validate() error {
	if q.Unfinished && q.Status != "" {
		return fmt.Errorf("%w: unfinished and status %s are exclusive", ErrInvalidQuery, q.Status)
	}
	if q.OldestFirst && (q.Group == "" || !q.unfinished() || len(q.Keys) > 0) {
		return fmt.Errorf("%w: oldest first lists the unfinished runs of one group only", ErrInvalidQuery)
	}
	for _, t := range []time.Time{q.CreatedAfter, q.CreatedBefore} {
		if !t.IsZero() && (t.Before(MinCreatedFilter) || t.After(MaxCreatedFilter)) {
			return fmt.Errorf("%w: created time %s outside %s..%s", ErrInvalidQuery, t.Format(time.RFC3339Nano),
				MinCreatedFilter.Format(time.RFC3339Nano), MaxCreatedFilter.Format(time.RFC3339Nano))
		}
	}
	return nil
}

// unfinished reports whether q keeps only Pending or Running runs: they are read from the
// active index.
func (q RunQuery) unfinished() bool {
	return q.Unfinished || q.Status == StatusPending || q.Status == StatusRunning
}

// RunList is one page of runs.
type RunList struct {
	// Runs are the page's runs.
	Runs []Run
	// ContinuationToken asks ListRuns for the next page; "" on the last one.
	ContinuationToken string
}

// HistoryEvent is one append-only history row of a run.
type HistoryEvent struct {
	// Sequence numbers the run's history rows in order, from 1.
	Sequence int64
	// Type is the row's kind, one of the History… constants: run_started, node_completed,
	// route_resolved, wait_started, event_received, event_applied, run_completed, …
	Type string
	// Name is the step kind (orchestrator, execute_node, resolve_route, apply_event), or the
	// event name of an event_received row.
	Name string
	// Node is the node the row belongs to.
	Node string
	// Timestamp is when the row was written.
	Timestamp time.Time
	// Data is the row's JSON document; nil when it has none.
	Data json.RawMessage
}

// History row types (HistoryEvent.Type).
const (
	HistoryRunStarted         = "run_started"
	HistoryNodeCompleted      = "node_completed"
	HistoryRouteResolved      = "route_resolved"
	HistoryWaitStarted        = "wait_started"
	HistoryWaitTimedOut       = "wait_timed_out"
	HistoryEventReceived      = "event_received"
	HistoryEventApplied       = "event_applied"
	HistoryNodeRetryScheduled = "node_retry_scheduled"
	HistoryRunCompleted       = "run_completed"
	HistoryRunFailed          = "run_failed"
	HistoryRunTerminated      = "run_terminated"
	// HistoryEventRefused is an inbox event that failed its graph version's check when the
	// run's wait took it up (an event no process could check when it arrived): consumed, not
	// applied; the run keeps waiting. Its data names the event, its inbox_seq and the error.
	HistoryEventRefused = "event_refused"
	// HistoryEventNotApplied is an inbox event left unapplied when its run finished (it
	// arrived after its wait timed out, or the run never waited for it): written by the
	// finishing step, one row per event. Its data names the event and its inbox_seq.
	HistoryEventNotApplied = "event_not_applied"
)

// HistoryList is one page of a run's history, oldest first.
type HistoryList struct {
	// Events are the page's rows, oldest first.
	Events []HistoryEvent
	// ContinuationToken asks History for the next page; "" on the last one.
	ContinuationToken string
}

// Runs is what the HTTP surface needs from the engine. The engine implements it; the HTTP
// service depends only on this interface.
type Runs interface {
	// StartRun starts a run. Errors: ErrUnknownGraph (wrapped) for an unknown graph name,
	// ErrInvalidInstanceID, *RunExistsError when a run with that id exists and is not
	// finished (or exists at all, with NoReplace). A finished run with the same id is replaced.
	StartRun(ctx context.Context, req StartRunRequest) (Run, error)
	// GetRun returns a run's status. Errors: ErrRunNotFound.
	GetRun(ctx context.Context, instanceID string) (Run, error)
	// RaiseEvent stores an event for a run and wakes it; once stored it is accepted (nil).
	// Errors: ErrRunNotFound, ErrInvalidEventName, *RunFinishedError, ErrInvalidEventPayload.
	RaiseEvent(ctx context.Context, instanceID, eventName string, payload json.RawMessage, opts ...EventOption) error
	// CancelRun records a termination request. Errors: ErrRunNotFound, *RunFinishedError.
	CancelRun(ctx context.Context, instanceID, reason string) error
	// ListRuns lists runs, newest first within a page, with paging. Errors: ErrInvalidQuery
	// for a time filter outside MinCreatedFilter..MaxCreatedFilter or a bad continuation token.
	ListRuns(ctx context.Context, q RunQuery) (RunList, error)
	// History pages through a run's history. Errors: ErrRunNotFound.
	History(ctx context.Context, instanceID, continuationToken string, limit int) (HistoryList, error)
	// PurgeRun deletes a finished run and its history. Errors: ErrRunNotFound,
	// *RunNotFinishedError, *ChildAwaitedError.
	PurgeRun(ctx context.Context, instanceID string) error
}

// VersionCount is how many unfinished runs one version of a graph has.
type VersionCount struct {
	// GraphHash and GraphVersion name the version.
	GraphHash, GraphVersion string
	// Unfinished counts the runs that are Pending or Running on this version, waiting ones
	// included.
	Unfinished int
}

// VersionCounter is an optional capability of a Runs: counting a graph's unfinished runs per
// version, so an operator knows when an old version can leave the deployment. The Engine
// implements it.
type VersionCounter interface {
	// UnfinishedByVersion returns one VersionCount per graph hash with unfinished runs of
	// graph, in hash order; empty for a graph without any.
	UnfinishedByVersion(ctx context.Context, graph string) ([]VersionCount, error)
}

// Run errors.
var (
	// ErrRunNotFound reports an unknown run id.
	ErrRunNotFound = errors.New("engine: run not found")
	// ErrInvalidInstanceID reports an instance id outside ValidInstanceID: not 1–256
	// printable ASCII characters without / \ # ?, or "." or "..".
	ErrInvalidInstanceID = errors.New("engine: invalid instance_id")
	// ErrInvalidEventName reports an event name outside ValidEventName.
	ErrInvalidEventName = errors.New("engine: invalid event_name")
	// ErrInvalidGroup reports a StartRunRequest.Group outside ValidGroup, or one the store
	// cannot key (PartitionKeyChecker).
	ErrInvalidGroup = errors.New("engine: invalid group")
	// ErrInvalidGraphName reports a registered graph whose name the engine cannot store
	// (ValidGraphName): a fault of the app, found at start before anything is stored.
	ErrInvalidGraphName = errors.New("engine: graph name cannot be stored")
)

// ValidInstanceID reports whether id can name a new run or be looked up: 1–256 printable
// ASCII characters without / \ # ?, and neither "." nor "..". Those two are the only ids a
// URL normaliser changes once the id is percent-encoded as a path segment (RFC 3986 section
// 5.2.4 removes them, and WHATWG parsers also read "%2e" and "%2E" as "."), so every HTTP
// client collapses /api/runs/.. and no such run could be reached; every other id survives
// encoding unchanged ("%" travels as "%25", a space as "%20").
func ValidInstanceID(id string) bool {
	return id != "." && id != ".." && storableInstanceID(id)
}

// storableInstanceID reports whether id is 1–256 printable ASCII characters without / \ # ?:
// the rule rows and work items are read back with, so a run started before "." and ".."
// were refused still has its index rows and work items read.
func storableInstanceID(id string) bool {
	if len(id) < 1 || len(id) > 256 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < 0x20 || c > 0x7e || c == '/' || c == '\\' || c == '#' || c == '?' {
			return false
		}
	}
	return true
}

// Name limits. Every name a caller hands the engine that it stores as a key or a property
// is checked before anything is stored:
//
//   - instance ids: 1–256 printable ASCII characters without / \ # ?, and not "." or ".."
//     (ValidInstanceID);
//   - event names: 1–maxNameLength characters of valid UTF-8, no control character
//     (ValidEventName); an event name is a property of its inbox and history rows, which
//     cannot spill to the payload store;
//   - graph names: as event names, and without / \ # ? either (ValidGraphName): a graph
//     name is part of the run index's partition keys;
//   - idempotency keys: any length; only their SHA-256 is stored.
//
// Lengths count UTF-16 code units, the unit Azure Table storage measures strings in.
const maxNameLength = 256

// ValidEventName reports whether name can be an event name: 1–256 UTF-16 code units of
// valid UTF-8, none of them a control character (U+0000–U+001F, U+007F–U+009F).
func ValidEventName(name string) bool {
	if name == "" || !utf8.ValidString(name) || utf16Len(name) > maxNameLength {
		return false
	}
	for _, r := range name {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	return true
}

// ValidGraphName reports whether the engine can store runs of a graph with this name: a
// valid event name (ValidEventName) without / \ # or ?.
func ValidGraphName(name string) bool {
	return ValidEventName(name) && !strings.ContainsAny(name, "/\\#?")
}

// RunExistsError reports a start for an instance id whose run is not finished (or, with
// StartRunRequest.NoReplace, any run).
type RunExistsError struct {
	// InstanceID is the run's id.
	InstanceID string
	// Status is the run's status.
	Status RunStatus
}

// Error names the instance and the status of its run.
func (e *RunExistsError) Error() string {
	return fmt.Sprintf("engine: instance %q already exists with status %s", e.InstanceID, e.Status)
}

// RunFinishedError reports an event or cancel for a finished run.
type RunFinishedError struct {
	// InstanceID is the run's id.
	InstanceID string
	// Status is the run's status.
	Status RunStatus
}

// Error names the instance and the status of its run.
func (e *RunFinishedError) Error() string {
	return fmt.Sprintf("engine: instance %q is not running (status %s)", e.InstanceID, e.Status)
}

// RunNotFinishedError reports a purge of a run that is still active.
type RunNotFinishedError struct {
	// InstanceID is the run's id.
	InstanceID string
	// Status is the run's status.
	Status RunStatus
}

// Error names the instance and the status of its run.
func (e *RunNotFinishedError) Error() string {
	return fmt.Sprintf("engine: instance %q is still active (status %s)", e.InstanceID, e.Status)
}

// runLookupError maps a head read error to the Runs contract (ErrRunNotFound).
func runLookupError(err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrRunNotFound
	}
	return err
}
