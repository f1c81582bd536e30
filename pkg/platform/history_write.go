package platform

import (
	"encoding/json"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// writeHistory answers a history page (a JSON array, json.dumps style) state by state, so
// that what it holds shrinks as the client reads: the states' values are counted in the
// request's answer first, then each state is encoded (its encoding counted, its values given
// back) and, once every one is counted, written and given back in turn. Past a bound the page
// is refused (429, or 413 for one page past the bound of a response) before anything is sent.
func (s *Service) writeHistory(w http.ResponseWriter, r *http.Request, states []threadStateBody) {
	a := answerOf(r.Context())
	var values int64
	for i := range states {
		values += valuesBytes(states[i].Values)
	}
	if err := a.count(values); err != nil {
		writeError(w, err, s.logger)
		return
	}
	encoded := make([][]byte, len(states))
	for i := range states {
		b, err := pyjson.Marshal(states[i])
		if err != nil {
			s.logger.Error("encode platform response", "error", err)
			apierror.WriteJSON(w, http.StatusInternalServerError, apierror.Platform.Internal())
			return
		}
		if err := a.count(int64(len(b))); err != nil {
			writeError(w, err, s.logger)
			return
		}
		a.giveBack(valuesBytes(states[i].Values))
		encoded[i], states[i] = b, threadStateBody{} // its encoding holds it now
	}
	a.loaded()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	sep := []byte("[")
	for i, b := range encoded {
		if _, err := w.Write(sep); err != nil {
			return // the client left
		}
		if _, err := w.Write(b); err != nil {
			return
		}
		sep = []byte(", ")
		encoded[i] = nil
		a.giveBack(int64(len(b)))
	}
	if len(encoded) == 0 {
		_, _ = w.Write(sep)
	}
	_, _ = w.Write([]byte("]"))
}

// valuesBytes is what a state's encoded values hold.
func valuesBytes(v any) int64 {
	if raw, ok := v.(json.RawMessage); ok {
		return int64(len(raw))
	}
	return 0
}
