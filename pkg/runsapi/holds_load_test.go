package runsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/runsapi"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// pagedHistory serves alice's run of 100 history rows of about 100 kB each through a budget,
// honouring the page's limit and token as the engine does, and counts the rows it loads.
func pagedHistory(t *testing.T, budget *respbudget.Budget) (get func(token string) *httptest.ResponseRecorder, loaded *atomic.Int64) {
	t.Helper()
	data, _ := json.Marshal(strings.Repeat("x", 100_000))
	loaded = new(atomic.Int64)
	runs := &fakeRuns{
		get: func(_ context.Context, id string) (engine.Run, error) {
			run := pendingRun(id)
			run.Input.Metadata = json.RawMessage(`{"owner": "alice"}`)
			return run, nil
		},
		history: func(_ context.Context, _, token string, limit int) (engine.HistoryList, error) {
			from, _ := strconv.Atoi(token)
			to := min(from+limit, 100)
			out := engine.HistoryList{}
			for i := from; i < to; i++ {
				out.Events = append(out.Events, engine.HistoryEvent{Sequence: int64(i + 1), Type: "node_completed", Name: "n", Node: "n", Data: data})
			}
			loaded.Add(int64(to - from))
			if to < 100 {
				out.ContinuationToken = strconv.Itoa(to)
			}
			return out, nil
		},
	}
	svc, err := runsapi.NewService(runsapi.Options{Runs: runs, Registry: runsapitest.Registry(t, examples.All),
		Logger: funchosttest.TestLogger(t), Isolation: newIsolation(t, "192.0.2.0/24"), ResponseBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	app, err := svc.FunctionApp()
	if err != nil {
		t.Fatal(err)
	}
	h := app.Standalone(funchost.StandaloneOptions{Logger: funchosttest.TestLogger(t)})
	return func(token string) *httptest.ResponseRecorder {
		path := "/api/runs/run-a/history"
		if token != "" {
			path += "?continuation_token=" + token
		}
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set(isolation.PrincipalIDHeader, "alice")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}, loaded
}

// TestHistory_NoRoom_RefusedBeforeRowsLoad: with alice's share all but full, her history
// request is refused 429 before any of its rows is read from the store.
func TestHistory_NoRoom_RefusedBeforeRowsLoad(t *testing.T) {
	budget := respbudget.New(respbudget.Limits{})
	held, err := budget.Hold("alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	held.Add(respbudget.DefaultBytesPerIdentity - 1<<20) // her slow readers' answers
	defer held.Release()
	get, loaded := pagedHistory(t, budget)
	if w := get(""); w.Code != http.StatusTooManyRequests || loaded.Load() != 0 {
		t.Fatalf("alice with 1 MiB of her share left: %d after loading %d rows; want 429 before any row loads", w.Code, loaded.Load())
	}
}

// TestHistory_RowsCountedAsTheyLoad_PageEndsAtTheRoomLeft: with 16 MiB of alice's share left,
// her page of 100 rows of 100 kB (20 MB while loaded and encoded) ends where the room does,
// its continuation token leading to the rest: every row is served, page by page, none refused.
func TestHistory_RowsCountedAsTheyLoad_PageEndsAtTheRoomLeft(t *testing.T) {
	budget := respbudget.New(respbudget.Limits{})
	held, err := budget.Hold("alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	held.Add(respbudget.DefaultBytesPerIdentity - 16<<20) // her slow readers' answers
	defer held.Release()
	get, _ := pagedHistory(t, budget)
	var seqs []int64
	token, pages := "", 0
	for ; pages < 10; pages++ {
		w := get(token)
		var page struct {
			Events []struct {
				Sequence int64 `json:"sequence"`
			} `json:"events"`
			ContinuationToken *string `json:"continuation_token"`
		}
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &page) != nil {
			t.Fatalf("page %d: %d %.200s", pages, w.Code, w.Body.String())
		}
		for _, e := range page.Events {
			seqs = append(seqs, e.Sequence)
		}
		if page.ContinuationToken == nil {
			break
		}
		token = *page.ContinuationToken
	}
	if len(seqs) != 100 || seqs[0] != 1 || seqs[99] != 100 || pages < 1 {
		t.Fatalf("%d rows in %d pages (%v…), want the 100 rows in order over more than one page", len(seqs), pages+1, seqs[:min(3, len(seqs))])
	}
	if used, _ := budget.UsedBy("alice"); used != held.Held() {
		t.Fatalf("alice holds %d bytes after her pages were read, want %d: the loads gave back what they held", used, held.Held())
	}
}
