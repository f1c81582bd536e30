package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
// deployed. No user code runs and nothing counts towards the poison limit meanwhile. A parent
// whose child run was never started and whose child's graph is not registered here is parked
// the same way, without the mark (childMissing, child_wait.go). The
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

// parkedBackoff returns the delay before the next look at a run parked for d already, where
// no count of looks is kept (a parent whose child's graph is not registered, child_wait.go):
// about d, within versionRetryMin..versionRetryMax, which doubles the wait from look to look
// as versionBackoff does.
func parkedBackoff(d time.Duration) time.Duration {
	return min(max(d, versionRetryMin), versionRetryMax)
}

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

// UnregisteredVersion is a graph version with unfinished runs that this process's registry
// lacks: its runs are parked wherever they are picked up here (Engine.UnregisteredVersions).
type UnregisteredVersion struct {
	// GraphName, GraphVersion and GraphHash name the version.
	GraphName, GraphVersion, GraphHash string
	// Unfinished counts its unfinished runs among the index rows read: a lower bound when the
	// read was cut short.
	Unfinished int
}

// UnregisteredVersions reads the active run index — the rows of unfinished runs only, never
// the runs of the past — and returns the graph versions with unfinished runs that are not
// registered on this process, by graph name and hash: what an operator must deploy (or let
// finish elsewhere) before those runs can go on. The read is bounded: at most limit rows
// (spread over the index shards; limit ≤ 0 means 1000), so its cost never follows the
// number of runs in flight past it, and truncated reports that rows were left unread (the
// counts are then lower bounds, and a version whose rows were all left out is missed).
func (e *Engine) UnregisteredVersions(ctx context.Context, limit int) (versions []UnregisteredVersion, truncated bool, err error) {
	if limit <= 0 {
		limit = 1000
	}
	perShard := max(limit/indexShards, 1)
	byKey := map[[2]string]*UnregisteredVersion{}
	count := func(graph, version, hash string) {
		if graph == "" || hash == "" {
			return
		}
		if _, err := e.reg.Lookup(graph, hash); err == nil {
			return
		}
		k := [2]string{graph, hash}
		v := byKey[k]
		if v == nil {
			v = &UnregisteredVersion{GraphName: graph, GraphVersion: version, GraphHash: hash}
			byKey[k] = v
		}
		v.Unfinished++
	}
	for s := range indexShards {
		q := Query{PartitionKey: shardPrefix(indexActivePrefix, s), RowKeyFrom: indexRowFrom, RowKeyTo: indexRowTo, Limit: min(perShard, 1000)}
		for read := 0; ; {
			page, err := e.store.Query(ctx, q)
			if err != nil {
				return nil, false, fmt.Errorf("read unregistered versions: %w", err)
			}
			for _, ent := range page.Entities {
				count(str(ent.Properties, iGraph), str(ent.Properties, iVersion), str(ent.Properties, iHash))
			}
			read += len(page.Entities)
			if page.Continuation == "" {
				break
			}
			if read >= perShard {
				truncated = true
				break
			}
			q.Continuation, q.Limit = page.Continuation, min(perShard-read, 1000)
		}
	}
	for _, v := range byKey {
		versions = append(versions, *v)
	}
	slices.SortFunc(versions, func(a, b UnregisteredVersion) int {
		return cmp.Or(strings.Compare(a.GraphName, b.GraphName), strings.Compare(a.GraphHash, b.GraphHash))
	})
	return versions, truncated, nil
}
