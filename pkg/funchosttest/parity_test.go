package funchosttest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// Item 10: `"methods": []` is a method constraint nothing satisfies (routing falls through to
// later functions), while an omitted list means every method.
func TestEmulator_EmptyMethodsList_MatchesNothing(t *testing.T) {
	root := writeApp(t, "", map[string]string{
		"a_none": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"items/{id}","methods":[]},{"type":"http","direction":"out","name":"res"}]}`,
		"b_all":  httpFunc("anonymous", "items/{id}"),
	})
	rec := &recorder{}
	e := start(t, root, rec, funchosttest.Options{})
	if errs := e.FunctionErrors(); len(errs) != 1 {
		// Identical routes: an empty list intersects everything for the conflict check, so the
		// later function fails to load — and then nothing at all serves the route.
		t.Fatalf("FunctionErrors = %v, want b_all refused as a conflict", errs)
	}
	for _, m := range []string{"GET", "POST", "DELETE"} {
		if status, _, _ := do(t, m, e.URL()+"/api/items/1", nil, nil); status != 404 {
			t.Errorf("%s with methods [] = %d, want 404", m, status)
		}
	}
	root2 := writeApp(t, "", map[string]string{
		"a_none": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"items/{id}","methods":[]},{"type":"http","direction":"out","name":"res"}]}`,
		"b_all":  httpFunc("anonymous", "items/{id:int}"),
	})
	e2 := start(t, root2, rec, funchosttest.Options{})
	if status, _, body := do(t, "GET", e2.URL()+"/api/items/1", nil, nil); status != 200 || body != "b_all" {
		t.Errorf("fall-through past methods [] = %d %q, want b_all", status, body)
	}
}

// Item 10: the caller going away does not cancel the invocation (the host sends without the
// caller's cancellation).
func TestEmulator_CallerDisconnect_DoesNotCancelTheInvocation(t *testing.T) {
	started, release, handlerErr := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request, _ invocation) {
		close(started)
		<-release
		handlerErr <- r.Context().Err()
		writeResult(w, map[string]any{"res": map[string]any{"body": "late"}})
	}}
	e := start(t, writeApp(t, "", map[string]string{"fn": httpFunc("anonymous", "fn")}), rec, funchosttest.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.URL()+"/api/fn", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	}()
	<-started
	cancel()
	<-done // the caller has gone
	close(release)
	if err := <-handlerErr; err != nil {
		t.Errorf("the handler's request context ended with %v after the caller left; want it alive", err)
	}
}

// Item 10: a timer that fires more often than once a minute carries no ScheduleStatus, even
// with useMonitor true.
func TestEmulator_SubMinuteTimer_HasNoScheduleStatus(t *testing.T) {
	rec := &recorder{}
	e := start(t, writeApp(t, "", map[string]string{
		"fast":   `{"bindings":[{"name":"timer","type":"timerTrigger","direction":"in","schedule":"*/10 * * * * *","useMonitor":true}]}`,
		"list":   `{"bindings":[{"name":"timer","type":"timerTrigger","direction":"in","schedule":"0,30 * * * * *"}]}`,
		"minute": `{"bindings":[{"name":"timer","type":"timerTrigger","direction":"in","schedule":"0 * * * * *"}]}`,
	}), rec, funchosttest.Options{})
	for name, wantStatus := range map[string]bool{"fast": false, "list": false, "minute": true} {
		if err := e.TriggerTimer(t.Context(), name); err != nil {
			t.Fatal(err)
		}
		info := rec.last(t).Payload["Data"].(map[string]any)["timer"].(map[string]any)
		if got := info["ScheduleStatus"] != nil; got != wantStatus {
			t.Errorf("%s: ScheduleStatus present = %v, want %v", name, got, wantStatus)
		}
	}
}
