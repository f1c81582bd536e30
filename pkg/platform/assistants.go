package platform

import (
	"net/http"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// assistants returns one assistant per registered graph, in registration order.
func (s *Service) assistants() []assistantBody {
	infos := s.app.Graphs()
	if s.durable != nil {
		infos = append(infos, s.durable.Graphs()...)
	}
	out := make([]assistantBody, 0, len(infos))
	for _, g := range infos {
		out = append(out, s.assistant(g))
	}
	return out
}

func (s *Service) assistant(g host.GraphInfo) assistantBody {
	at := timeText(s.started)
	return assistantBody{
		AssistantID: g.Name, GraphID: g.Name, Config: map[string]any{}, CreatedAt: at, Version: 1,
		Name: g.Name, Description: g.Description, UpdatedAt: at, Context: map[string]any{},
	}
}

// assistantFilter is the parsed body of assistants search and count.
type assistantFilter struct {
	graphID, name string
	limit, offset int
}

func (s *Service) parseAssistantFilter(r *http.Request, paging bool) (assistantFilter, error) {
	var f assistantFilter
	body, err := readBody(r, s.maxBody)
	if err != nil {
		return f, err
	}
	obj, err := parseBody(body, emptyOK)
	if err != nil {
		return f, err
	}
	if f.graphID, _, err = obj.optString("graph_id"); err != nil {
		return f, err
	}
	if f.name, _, err = obj.optString("name"); err != nil {
		return f, err
	}
	if _, err = obj.optObject("metadata"); err != nil {
		return f, err
	}
	if paging {
		if f.limit, err = obj.optInt("limit", 10, 1); err != nil {
			return f, err
		}
		if f.offset, err = obj.optInt("offset", 0, 0); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (f assistantFilter) match(all []assistantBody) []assistantBody {
	out := []assistantBody{}
	for _, a := range all {
		if f.graphID != "" && a.GraphID != f.graphID {
			continue
		}
		if f.name != "" && !strings.Contains(strings.ToLower(a.Name), strings.ToLower(f.name)) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func (s *Service) serveAssistantsSearch(w http.ResponseWriter, r *http.Request) {
	f, err := s.parseAssistantFilter(r, true)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	found := f.match(s.assistants())
	if f.offset >= len(found) {
		found = []assistantBody{}
	} else {
		found = found[f.offset:]
	}
	if len(found) > f.limit {
		found = found[:f.limit]
	}
	s.writeJSON(w, r, http.StatusOK, found)
}

func (s *Service) serveAssistantsCount(w http.ResponseWriter, r *http.Request) {
	f, err := s.parseAssistantFilter(r, false)
	if err != nil {
		writeError(w, err, s.logger)
		return
	}
	s.writeJSON(w, r, http.StatusOK, len(f.match(s.assistants())))
}

func (s *Service) serveAssistantGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("assistant_id")
	for _, a := range s.assistants() {
		if a.AssistantID == id {
			s.writeJSON(w, r, http.StatusOK, a)
			return
		}
	}
	writeError(w, apierror.Newf(apierror.ErrNotFound, "Assistant %s not found", repr(id)), s.logger)
}
