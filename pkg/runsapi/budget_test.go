package runsapi_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/membudget"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// watchedBody is a request body that counts the reads of it.
type watchedBody struct {
	r     io.Reader
	reads *atomic.Int32
}

func (b watchedBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.r.Read(p)
}

// A start whose declared body the memory budget has no room for is refused 507 in the runs
// API's shape before its body is read, and reaches no run; one that fits is started, an
// unknown graph is still a 404 and a body past the cap still a 413.
func TestStartRun_PastTheMemoryBudget_Refused507Unread(t *testing.T) {
	t.Parallel()
	b, err := membudget.New(membudget.Limits{Total: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Grow(t.Context(), "", 6500); err != nil { // 500 bytes left for new work
		t.Fatal(err)
	}
	var started atomic.Int32
	runs := &fakeRuns{start: func(context.Context, engine.StartRunRequest) (engine.Run, error) {
		started.Add(1)
		return pendingRun("r"), nil
	}}
	svc, err := runsapi.NewService(runsapi.Options{Runs: runs, Registry: runsapitest.Registry(t, examples.All),
		Logger: funchosttest.TestLogger(t), MaxRequestBodyBytes: 1024, MemoryBudget: b})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	h := app.Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t)})
	start := func(graph, body string, declared int64) (int, string, int32) {
		var reads atomic.Int32
		r := httptest.NewRequest("POST", "/api/graphs/"+graph+"/runs", watchedBody{strings.NewReader(body), &reads})
		r.ContentLength = declared
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String(), reads.Load()
	}
	small := `{"input":{"source_url":"s"}}`
	big := `{"input":{"source_url":"` + strings.Repeat("s", 600) + `"}}`
	if code, body, reads := start("data_pipeline", big, int64(len(big))); code != 507 || body != `{"error": "`+apierror.StorageFullMessage+`"}` || reads != 0 {
		t.Fatalf("a start past the budget: %d %s, %d reads of its body; want 507 unread", code, body, reads)
	}
	if code, body, _ := start("data_pipeline", small, -1); code != 202 {
		t.Fatalf("a start of undeclared length that fits: %d %s", code, body)
	}
	if code, body, _ := start("data_pipeline", small, int64(len(small))); code != 202 {
		t.Fatalf("a start that fits: %d %s", code, body)
	}
	if code, body, _ := start("no_such_graph", big, int64(len(big))); code != 404 {
		t.Fatalf("an unknown graph past the budget: %d %s, want 404", code, body)
	}
	if code, body, _ := start("data_pipeline", strings.Repeat(" ", 2000), 2000); code != 413 {
		t.Fatalf("a body past the cap and the budget: %d %s, want 413", code, body)
	}
	if n := started.Load(); n != 2 {
		t.Fatalf("%d runs started, want the 2 that fit", n)
	}
	if b.Used() != 6500 {
		t.Fatalf("the budget holds %d bytes, want 6500: the service accounts nothing itself", b.Used())
	}
}
