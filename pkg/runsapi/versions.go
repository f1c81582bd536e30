package runsapi

import (
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// Response bodies of GET /api/graphs/{graph_name}/versions, fields in wire order.
type (
	graphVersionBody struct {
		GraphHash      string `json:"graph_hash"`
		GraphVersion   string `json:"graph_version"`
		Registered     bool   `json:"registered"`
		Latest         bool   `json:"latest"`
		UnfinishedRuns int    `json:"unfinished_runs"`
	}
	graphVersionsBody struct {
		GraphName string             `json:"graph_name"`
		Versions  []graphVersionBody `json:"versions"`
	}
)

// listVersions serves GET /api/graphs/{graph_name}/versions: every version of the graph this
// process has registered (the latest first, then the others in registration order) and every
// other version that still has unfinished runs (in hash order, not registered), each with its
// count of unfinished runs
// (engine.VersionCounter). 404 {"error": "unknown graph '<name>'"} when the
// name has neither. Under isolation it is the master key's only (403 for another caller):
// the counts are every identity's.
func (s *Service) listVersions(w http.ResponseWriter, r *http.Request) error {
	if !s.caller(r.Context()).Admin {
		return errAdminOnly
	}
	name := r.PathValue("graph_name")
	if s.reg.Internal(name) {
		return &graphNotFoundError{name: name}
	}
	counts, err := s.runs.(engine.VersionCounter).UnfinishedByVersion(r.Context(), name)
	if err != nil {
		return err
	}
	byHash := make(map[string]engine.VersionCount, len(counts))
	for _, c := range counts {
		byHash[c.GraphHash] = c
	}
	out := graphVersionsBody{GraphName: name, Versions: []graphVersionBody{}}
	latest, _ := s.reg.Latest(name)
	for _, g := range s.reg.Versions(name) {
		m := g.Manifest()
		out.Versions = append(out.Versions, graphVersionBody{GraphHash: m.GraphHash, GraphVersion: m.Version, Registered: true,
			Latest: latest != nil && latest.Manifest().GraphHash == m.GraphHash, UnfinishedRuns: byHash[m.GraphHash].Unfinished})
		delete(byHash, m.GraphHash)
	}
	for _, c := range counts {
		if _, left := byHash[c.GraphHash]; left {
			out.Versions = append(out.Versions, graphVersionBody{GraphHash: c.GraphHash, GraphVersion: c.GraphVersion,
				UnfinishedRuns: c.Unfinished})
		}
	}
	if len(out.Versions) == 0 {
		return &graphNotFoundError{name: name}
	}
	apiWriteJSON(w, http.StatusOK, out, s.logger)
	return nil
}
