package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// TestEngine_ListRuns_TimeFilterOutsideIndex_InvalidQuery: a created-time bound the index
// cannot represent is refused with ErrInvalidQuery (no panic, no wrong page); the bounds
// themselves list normally.
func TestEngine_ListRuns_TimeFilterOutsideIndex_InvalidQuery(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.Options{}, false)
	r.start(t, "data_pipeline", "p0", `{"source_url":"u"}`)
	year := func(y int) time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	for _, tt := range []struct {
		name string
		q    engine.RunQuery
	}{
		{"before year 2300", engine.RunQuery{CreatedBefore: year(2300)}},
		{"after year 2300", engine.RunQuery{CreatedAfter: year(2300)}},
		{"before year 1600", engine.RunQuery{CreatedBefore: year(1600)}},
		{"after year 1600", engine.RunQuery{CreatedAfter: year(1600)}},
		{"after 1969", engine.RunQuery{CreatedAfter: year(1969)}},
		{"after the epoch itself", engine.RunQuery{CreatedAfter: time.Unix(0, 0)}},
		{"one past the max", engine.RunQuery{CreatedBefore: engine.MaxCreatedFilter.Add(time.Nanosecond)}},
	} {
		if _, err := r.e.ListRuns(t.Context(), tt.q); !errors.Is(err, engine.ErrInvalidQuery) {
			t.Errorf("%s: ListRuns error = %v, want ErrInvalidQuery", tt.name, err)
		}
	}
	page, err := r.e.ListRuns(t.Context(), engine.RunQuery{CreatedAfter: engine.MinCreatedFilter, CreatedBefore: engine.MaxCreatedFilter})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].InstanceID != "p0" {
		t.Fatalf("ListRuns within the bounds = %+v, %v; want p0", page.Runs, err)
	}
}
