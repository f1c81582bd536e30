package runsapi

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// The durable run of a LangGraph-Platform thread has an instance id derived from the thread
// id (ThreadRunID). Those ids are reserved: the runs API refuses to start a run with one, so
// no caller can take a thread's run before the thread does, and the derivation is one-to-one,
// so no thread id names another thread's run.
const (
	// threadRunPrefix starts the id of a thread whose id can follow it as it is.
	threadRunPrefix = "thread-"
	// threadRunHashedPrefix starts the id of any other thread (one whose id holds / \ # ? or
	// is too long), followed by the first 32 hex digits of the SHA-256 of its id. A direct id
	// never starts with it: its seventh character is "-".
	threadRunHashedPrefix = "thread~"
)

// ThreadRunID is the instance id of the durable run of thread tid: "thread-<tid>" when that
// is a valid instance id, else "thread~<first 32 hex digits of sha256(tid)>". Distinct
// thread ids give distinct instance ids (but for a SHA-256 collision), and every one of them
// is reserved (ReservedInstanceID).
func ThreadRunID(tid string) string {
	if id := threadRunPrefix + tid; engine.ValidInstanceID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(tid))
	return threadRunHashedPrefix + hex.EncodeToString(sum[:16])
}

// ReservedInstanceID reports whether id is in the namespace of threads' durable runs
// ("thread-…" or "thread~…"), which the runs API does not start runs in.
func ReservedInstanceID(id string) bool {
	return strings.HasPrefix(id, threadRunPrefix) || strings.HasPrefix(id, threadRunHashedPrefix)
}

// errReservedID answers a start with an id of the threads' namespace.
var errReservedID = apierror.New(apierror.ErrBadRequest,
	"invalid instance_id: ids starting with 'thread-' or 'thread~' are reserved for the durable runs of threads")

// errChildID answers a start with an id of the child runs' namespace (engine.ChildRunPrefix):
// a child run's id derives from its parent's step, and no caller may take it first.
var errChildID = apierror.New(apierror.ErrBadRequest,
	"invalid instance_id: ids starting with '"+engine.ChildRunPrefix+"' are reserved for child runs")
