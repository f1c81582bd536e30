package host

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/funcgraph/funcgraph/pkg/internal/version"
)

// healthDetail is one member contributed to the health details body.
type healthDetail struct {
	key string
	fn  func() any
}

// AddHealthDetails adds a top-level member key to the GET /api/health/details body, computed
// by fn at every request (it must be safe for concurrent use). The durable engine uses it to
// list its graphs next to the hosted ones, so that one app has a single health function. The
// keys "status", "funcgraph_version" and "graphs" are reserved, and a key can be added only
// once.
func (a *GraphHostApp) AddHealthDetails(key string, fn func() any) error {
	if key == "" || key == "status" || key == "funcgraph_version" || key == "graphs" || fn == nil {
		return fmt.Errorf("add health details %q: %w: reserved or empty key, or nil func", key, ErrInvalidOptions)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if slices.ContainsFunc(a.details, func(d healthDetail) bool { return d.key == key }) {
		return fmt.Errorf("add health details %q: %w: key already added", key, ErrInvalidOptions)
	}
	a.details = append(a.details, healthDetail{key: key, fn: fn})
	return nil
}

// serveHealth answers GET /api/health: liveness only, never lists graphs.
func (a *GraphHostApp) serveHealth(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, "application/json", []byte(`{"status":"ok"}`))
}

// detailsHead opens every health details body: the status, then the version of funcgraph the
// binary was built with.
var detailsHead = `{"status":"ok","funcgraph_version":` + strconv.Quote(version.Version) + `,"graphs":`

// serveHealthDetails answers GET /api/health/details: the status, funcgraph's version, the
// graphs in registration order, then the members added with AddHealthDetails.
func (a *GraphHostApp) serveHealthDetails(w http.ResponseWriter, _ *http.Request) {
	graphs := a.Graphs()
	a.mu.RLock()
	details := slices.Clone(a.details)
	a.mu.RUnlock()
	body := []byte(detailsHead)
	body, err := appendCompact(body, graphs)
	for _, d := range details {
		if err != nil {
			break
		}
		body = append(body, ',')
		body, _ = appendCompact(body, d.key)
		body = append(body, ':')
		body, err = appendCompact(body, d.fn())
	}
	if err != nil {
		a.logger.Error("encode health details", "error", err)
		writeError(w, fmt.Errorf("encode health details: %w", err))
		return
	}
	writeBody(w, http.StatusOK, "application/json", append(body, '}'))
}
