package launch

import (
	"context"
	"log/slog"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/host"
)

// The startup report of graph versions this instance lacks: at start, the engine reads the
// active run index (engine.Engine.UnregisteredVersions, at most versionReportRows rows: a
// bounded read, whatever the number of runs kept) and every graph version with unfinished
// runs that this instance has not registered is logged as a warning — its runs stay parked
// until an instance with that version picks them up — and listed under
// "unregistered_versions" in GET /api/health/details, as found at start:
//
//	"unregistered_versions": [{"graph_name": "…", "graph_version": "…", "graph_hash": "…", "unfinished_runs": 3}]
//
// null when the read failed (logged), empty when every version in flight is registered.

// unregisteredVersionsKey is the member of GET /api/health/details the report fills.
const unregisteredVersionsKey = "unregistered_versions"

// versionReportRows bounds the active index rows the startup report reads.
const versionReportRows = 5000

// versionReportTimeout bounds the startup report's read.
const versionReportTimeout = 10 * time.Second

// unregisteredVersion is one entry of the report, fields in wire order.
type unregisteredVersion struct {
	GraphName      string `json:"graph_name"`
	GraphVersion   string `json:"graph_version"`
	GraphHash      string `json:"graph_hash"`
	UnfinishedRuns int    `json:"unfinished_runs"`
}

// reportVersions runs the startup report of eng and adds it to h's health details.
func reportVersions(eng *engine.Engine, h *host.GraphHostApp, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), versionReportTimeout)
	defer cancel()
	var report []unregisteredVersion // nil (null) when the read fails
	found, truncated, err := eng.UnregisteredVersions(ctx, versionReportRows)
	if err != nil {
		logger.Warn("startup: cannot list the graph versions of unfinished runs", "error", err.Error())
	} else {
		report = make([]unregisteredVersion, 0, len(found))
		for _, v := range found {
			report = append(report, unregisteredVersion{GraphName: v.GraphName, GraphVersion: v.GraphVersion, GraphHash: v.GraphHash,
				UnfinishedRuns: v.Unfinished})
			logger.Warn("startup: unfinished runs wait for a graph version this instance does not have; they stay parked until an instance that has it picks them up",
				"graph", v.GraphName, "graph_version", v.GraphVersion, "graph_hash", v.GraphHash, "unfinished_runs", v.Unfinished,
				"rows_left_unread", truncated)
		}
	}
	return h.AddHealthDetails(unregisteredVersionsKey, func() any { return report })
}
