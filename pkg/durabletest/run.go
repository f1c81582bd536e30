package durabletest

import "github.com/funcgraph/funcgraph/pkg/engine"

// What a graph's tests read of a run, named here so that they need no import of package
// engine: the types are engine's, the same values.

// Run is a run's status as the engine reports it: what Start, Send, Cancel and Run return.
// Its RuntimeStatus is one of the Status constants.
type Run = engine.Run

// RunStatus is a run's runtime status (Run.RuntimeStatus).
type RunStatus = engine.RunStatus

// The runtime statuses of a run.
const (
	StatusPending    = engine.StatusPending
	StatusRunning    = engine.StatusRunning
	StatusCompleted  = engine.StatusCompleted
	StatusFailed     = engine.StatusFailed
	StatusTerminated = engine.StatusTerminated
)

// RunState is a run's current state and where it stands (Kit.RunState).
type RunState = engine.RunState

// RunPosition is where a run stands (RunState.At).
type RunPosition = engine.RunPosition

// BranchCount counts the branches of an open fan-out (RunPosition.Branches).
type BranchCount = engine.BranchCount

// HistoryEvent is one row of a run's history (History); its Type is one of the History
// constants.
type HistoryEvent = engine.HistoryEvent

// The kinds of history rows (HistoryEvent.Type).
const (
	HistoryRunStarted         = engine.HistoryRunStarted
	HistoryNodeCompleted      = engine.HistoryNodeCompleted
	HistoryRouteResolved      = engine.HistoryRouteResolved
	HistoryWaitStarted        = engine.HistoryWaitStarted
	HistoryWaitTimedOut       = engine.HistoryWaitTimedOut
	HistoryEventReceived      = engine.HistoryEventReceived
	HistoryEventApplied       = engine.HistoryEventApplied
	HistoryEventRefused       = engine.HistoryEventRefused
	HistoryEventNotApplied    = engine.HistoryEventNotApplied
	HistoryNodeRetryScheduled = engine.HistoryNodeRetryScheduled
	HistoryNodeFailed         = engine.HistoryNodeFailed
	HistorySleepStarted       = engine.HistorySleepStarted
	HistoryBranchesStarted    = engine.HistoryBranchesStarted
	HistoryBranchCompleted    = engine.HistoryBranchCompleted
	HistoryBranchFailed       = engine.HistoryBranchFailed
	HistoryBranchesJoined     = engine.HistoryBranchesJoined
	HistoryChildStarted       = engine.HistoryChildStarted
	HistoryChildFinished      = engine.HistoryChildFinished
	HistoryChildCompleted     = engine.HistoryChildCompleted
	HistoryCustom             = engine.HistoryCustom
	HistoryRunCompleted       = engine.HistoryRunCompleted
	HistoryRunFailed          = engine.HistoryRunFailed
	HistoryRunTerminated      = engine.HistoryRunTerminated
)

// ChildRunPrefix begins the instance id of every child run (durable.StartChild).
const ChildRunPrefix = engine.ChildRunPrefix

// Refusals of a start (TryStart) and of a lookup, to branch on with errors.Is and errors.As.
var (
	// ErrRunNotFound: no run has that id.
	ErrRunNotFound = engine.ErrRunNotFound
	// ErrInvalidInstanceID: the run id is not a valid instance id.
	ErrInvalidInstanceID = engine.ErrInvalidInstanceID
	// ErrInvalidRunInput: the initial state is not a JSON object.
	ErrInvalidRunInput = engine.ErrInvalidRunInput
)

// RunExistsError refuses a start whose id names a run not yet finished.
type RunExistsError = engine.RunExistsError
