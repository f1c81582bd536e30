package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// TestValidInstanceID_DotSegmentsRefusedOthersKept: "." and ".." are the ids a URL normaliser
// removes from a path, so they are refused; ids that merely look like escapes or carry spaces
// survive percent-encoding and stay valid.
func TestValidInstanceID_DotSegmentsRefusedOthersKept(t *testing.T) {
	t.Parallel()
	for _, id := range []string{".", "..", "", "a/b", strings.Repeat("x", 257)} {
		if engine.ValidInstanceID(id) {
			t.Errorf("ValidInstanceID(%q) = true, want false", id)
		}
	}
	for _, id := range []string{"...", ".a", "a.", "a..b", "%2e", "%2E%2E", "%41", " a ", " ", "~", strings.Repeat(".", 256)} {
		if !engine.ValidInstanceID(id) {
			t.Errorf("ValidInstanceID(%q) = false, want true", id)
		}
	}
}

// TestEngine_DotSegmentIDs_NotFoundOnLookups: a lookup by "." or ".." is ErrRunNotFound
// before storage, as for any id no run can have.
func TestEngine_DotSegmentIDs_NotFoundOnLookups(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false, chainGraph(t, "free", 1, nil))
	ctx := t.Context()
	for _, id := range []string{".", ".."} {
		if _, err := r.e.GetRun(ctx, id); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("GetRun(%q): %v", id, err)
		}
		if err := r.e.CancelRun(ctx, id, "x"); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("CancelRun(%q): %v", id, err)
		}
		if err := r.e.PurgeRun(ctx, id); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("PurgeRun(%q): %v", id, err)
		}
		if err := r.e.RaiseEvent(ctx, id, "go", nil); !errors.Is(err, engine.ErrRunNotFound) {
			t.Errorf("RaiseEvent(%q): %v", id, err)
		}
	}
}
