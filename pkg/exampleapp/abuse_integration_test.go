//go:build integration

package exampleapp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/exampleapp"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

// azureApp serves the example app in process on Azurite (runs, threads and checkpoints in
// Azure Tables, Queues and Blobs under a prefix of its own) through both transports.
func azureApp(t *testing.T) []funchosttest.Transport {
	t.Helper()
	return azureAppWith(t, nil)
}

// azureAppWith is azureApp with more settings, as the app reads them from its environment.
func azureAppWith(t *testing.T, settings map[string]string) []funchosttest.Transport {
	t.Helper()
	env := map[string]string{
		launch.EnvStorage:       azuritetest.ConnectionString(t),
		launch.EnvStoragePrefix: azuritetest.UniqueName("a"),
	}
	for k, v := range settings {
		env[k] = v
	}
	logger := slog.New(slog.DiscardHandler)
	s, err := launch.FromEnv(t.Context(), func(k string) string { return env[k] }, launch.ModeServe, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !s.Durable.Azure {
		t.Fatal("FromEnv did not pick the Azure backends")
	}
	app, err := exampleapp.Launch(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	return funchosttest.Transports(t, app.FunctionApp)
}

// call sends one request with the function key and returns status, Retry-After and body.
func call(ctx context.Context, client *http.Client, tr funchosttest.Transport, method, path, body string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, tr.BaseURL+path, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("x-functions-key", tr.FunctionKey)
	res, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Retry-After"), string(b), err
}

// TestIntegrationAbuse_ConcurrentEventsOneRun: 800 events posted at once to one run on Azure
// storage answer 202, 409 or 503 with Retry-After, never a 5xx otherwise; every accepted event
// is in the run's history exactly once. (They are approvals: an event the graph has no handler
// for is refused with a 404 before anything is stored; once one approval finishes the run,
// the rest are 409s.)
func TestIntegrationAbuse_ConcurrentEventsOneRun(t *testing.T) {
	t.Parallel() // slow, and independent of the package's other tests (its own app, storage prefix and ports)
	const n = 800
	tr := azureApp(t)[0]
	// The client's timeout only keeps a hung request from hanging the test: 800 writers of one
	// run's head take turns, and how long the last waits on two busy cores is a benchmark's
	// question, not this test's.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 200, MaxIdleConnsPerHost: 200}, Timeout: 5 * time.Minute}
	ctx := t.Context()
	if status, _, body, err := call(ctx, client, tr, "POST", "/api/graphs/support_agent/runs", `{"instance_id":"crowd","input":{"user_message":"I want a refund"}}`); err != nil || status != 202 {
		t.Fatalf("start: %d %s %v", status, body, err)
	}
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, retry, body, err := call(ctx, client, tr, "POST", "/api/runs/crowd/events/approval", fmt.Sprintf(`{"i":%d}`, i))
			switch {
			case err != nil:
				t.Errorf("event %d: %v", i, err)
			case status == 503 && retry == "":
				t.Errorf("event %d: 503 without Retry-After: %s", i, body)
			case status != 202 && status != 409 && status != 503:
				t.Errorf("event %d: %d %s", i, status, body)
			}
			statuses[i] = status
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	t.Logf("answers: %v", count)
	if count[202] == 0 {
		t.Fatal("no event was accepted")
	}
	seen := map[int]int{}
	token := ""
	for range 100 {
		path := "/api/runs/crowd/history?limit=1000"
		if token != "" {
			path += "&continuation_token=" + token
		}
		status, _, body, err := call(ctx, client, tr, "GET", path, "")
		if err != nil || status != 200 {
			t.Fatalf("history: %d %.300s %v", status, body, err)
		}
		var page struct {
			Events []struct {
				Type string `json:"type"`
				Name string `json:"name"`
				Data struct {
					Payload struct {
						I int `json:"i"`
					} `json:"payload"`
				} `json:"data"`
			} `json:"events"`
			Token *string `json:"continuation_token"`
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			if e.Type == "event_received" && e.Name == "approval" {
				seen[e.Data.Payload.I]++
			}
		}
		if page.Token == nil {
			break
		}
		token = *page.Token
	}
	for i, s := range statuses {
		switch {
		case s == 202 && seen[i] != 1:
			t.Errorf("accepted event %d is in the history %d times, want once", i, seen[i])
		case s != 202 && seen[i] != 0:
			t.Errorf("refused event %d (%d) is in the history", i, s)
		}
	}
}

// TestIntegrationAbuse_JunkContinuationToken: on Azure storage as in memory, a continuation
// token the runs API did not issue is a 400, also junk Azurite would read as a position; a
// token it issued pages on.
func TestIntegrationAbuse_JunkContinuationToken(t *testing.T) {
	ctx := t.Context()
	badToken := `{"error": "invalid query parameter 'continuation_token': want the token of a previous page, or none to start over"}`
	for _, tr := range azureApp(t) {
		t.Run(tr.Name, func(t *testing.T) {
			id := "junk-" + tr.Name
			if status, _, body, err := call(ctx, http.DefaultClient, tr, "POST", "/api/graphs/support_agent/runs", `{"instance_id":"`+id+`","input":{"user_message":"hi"}}`); err != nil || status != 202 {
				t.Fatalf("start: %d %s %v", status, body, err)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				_, _, body, _ := call(ctx, http.DefaultClient, tr, "GET", "/api/runs/"+id, "")
				if strings.Contains(body, `"runtime_status": "Completed"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("run did not complete: %s", body)
				}
			}
			status, _, body, err := call(ctx, http.DefaultClient, tr, "GET", "/api/runs/"+id+"/history?limit=1", "")
			var page struct {
				Token *string `json:"continuation_token"`
			}
			if err != nil || status != 200 || json.Unmarshal([]byte(body), &page) != nil || page.Token == nil {
				t.Fatalf("history page 1: %d %s %v", status, body, err)
			}
			if status, _, body, _ := call(ctx, http.DefaultClient, tr, "GET", "/api/runs/"+id+"/history?limit=1&continuation_token="+*page.Token, ""); status != 200 {
				t.Fatalf("history page 2: %d %s", status, body)
			}
			for _, junk := range []string{"%25%25", "AA", "eAB5", "YQBi", "junk", (*page.Token)[:len(*page.Token)-1]} {
				for _, path := range []string{"/api/runs?continuation_token=", "/api/runs/" + id + "/history?continuation_token="} {
					if status, _, body, _ := call(ctx, http.DefaultClient, tr, "GET", path+junk, ""); status != 400 || body != badToken {
						t.Errorf("%s%s: %d %s", path, junk, status, body)
					}
				}
			}
		})
	}
}

// TestIntegrationAbuse_LargeThreadValues: a 400 KB message on Azure storage leaves the thread
// idle with its values, as in memory (the values go to a blob; the thread entity stays small).
func TestIntegrationAbuse_LargeThreadValues(t *testing.T) {
	for _, tr := range azureApp(t) {
		t.Run(tr.Name, func(t *testing.T) { checkLargeThreadValues(t, tr) })
	}
}
