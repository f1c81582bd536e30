package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// A run whose graph version is not registered here.
//
// A run is pinned to the (graph name, graph hash) it started on. After a redeploy the process
// that receives its work item may not have that version (the old code was dropped, or a
// rolling deploy mixes instances). The run is not failed: the worker marks the head (one
// merge, once: the AwaitVersion property, which every later commit clears) so the run's
// status says which version it waits for, and puts the work item back on the queue with a
// back-off (versionRetryMin, doubling, at most versionRetryMax). A process that has the
// version then picks the run up where it stopped, at most versionRetryMax after it is
// deployed. No user code runs and nothing counts towards the poison limit meanwhile. The
// worker's side, Engine.awaitVersion with its back-off (versionBackoff), is in workitem.go;
// this file holds the rules.
//
// Cost while parked: per back-off period one work-item delivery (1 Q receive, 1 T head read,
// 1 Q delete) plus 1 Q enqueue. A step of a run whose version is registered pays nothing:
// the lookup is in memory, and clearing the mark is one more property of the step's merge.

// Back-off of a run waiting for its graph version.
const (
	versionRetryMin = 10 * time.Second
	versionRetryMax = 5 * time.Minute
)

// pAwaitVersion is the head property that marks a run waiting for its graph version.
const pAwaitVersion = "AwaitVersion"

// errVersionUnavailable reports a step whose run's graph version is not registered here.
var errVersionUnavailable = errors.New("engine: graph version not registered on this process")

// VersionUnavailableMessage is the message a run waiting for its graph version shows in its
// custom status (key "message", next to "waiting_for_version": the graph hash).
func VersionUnavailableMessage(graph, version, hash string) string {
	return fmt.Sprintf("graph '%s' version '%s' (graph_hash '%s') is not registered on the process that picked this run up; "+
		"the run continues when a process that has this version picks it up", graph, version, hash)
}

// versionStatus returns the custom status of a run waiting for its graph version: the status
// it had (or, while Pending, the 4 keys of its first visit) plus "waiting_for_version" (the
// graph hash) and "message".
func versionStatus(h *head) string {
	base := h.custom
	if len(base) < 3 || !strings.HasSuffix(base, "}") {
		base = customStatus(h, h.node)
	}
	extra := jsonObject("waiting_for_version", jstr(h.hash), "message", jstr(VersionUnavailableMessage(h.graph, h.version, h.hash)))
	return base[:len(base)-1] + "," + extra[1:]
}
