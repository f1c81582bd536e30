package durabletest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// Reminder is the state of reminderGraph.
type Reminder struct {
	Sent []string `json:"sent"`
}

// reminderGraph sends a reminder, sleeps every, and sends again, three times in all.
func reminderGraph(every time.Duration) durable.GraphRegistration[Reminder] {
	b := durable.NewManifestBuilder[Reminder]("reminders")
	b.SetEntrypoint("remind")
	_ = b.AddStep("remind", func(_ context.Context, r Reminder) (Reminder, error) {
		r.Sent = append(r.Sent, "reminder")
		return r, nil
	}, durable.WithDecide(func(_ context.Context, r Reminder) (durable.RouteDecision, error) {
		if len(r.Sent) < 3 {
			return durable.Sleep(every, "remind"), nil
		}
		return durable.Complete("done"), nil
	}))
	g, _ := b.Build()
	return g
}

// Advance fires durable sleeps as it fires wait timeouts and retries: every sleep that ends
// within d, including those that start while advancing.
func ExampleKit_Advance_sleep() {
	var t *testing.T // your test's t
	kit := durabletest.New(t, reminderGraph(24*time.Hour), durabletest.Options{})
	kit.Start("r1", Reminder{}) // sends the first reminder, then sleeps a day
	kit.Advance(48 * time.Hour) // two sleeps end: two more reminders
	if got := kit.Final("r1"); len(got.Sent) != 3 {
		t.Fatalf("sent %v", got.Sent)
	}
}

// TestKit_Advance_FiresSleeps runs ExampleKit_Advance_sleep's body and checks what it says: no
// reminder before its day, each after.
func TestKit_Advance_FiresSleeps(t *testing.T) {
	kit := durabletest.New(t, reminderGraph(24*time.Hour), durabletest.Options{})
	kit.Start("r1", Reminder{})
	kit.Advance(24*time.Hour - time.Second)
	if got := kit.Visits("r1"); len(got) != 1 || kit.Run("r1").RuntimeStatus != durabletest.StatusRunning {
		t.Fatalf("a second before the first sleep ends: visits %v, %s", got, kit.Run("r1").RuntimeStatus)
	}
	kit.Advance(24*time.Hour + time.Second)
	if got := kit.Final("r1"); len(got.Sent) != 3 {
		t.Fatalf("sent %v", got.Sent)
	}
	var kinds []string
	for _, ev := range kit.History("r1") {
		if ev.Type == durabletest.HistorySleepStarted {
			kinds = append(kinds, string(ev.Data))
		}
	}
	want := `{"until":"2025-01-02T00:00:00Z","next_node":"remind"} {"until":"2025-01-03T00:00:00Z","next_node":"remind"}`
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("sleep_started rows %s, want %s", got, want)
	}
}

// TestKit_Advance_SleepLongerThanTheQueueDelay: a 30-day sleep outlasts the queue's 7-day
// message delay; the early timers go back on the queue and the run wakes on its day.
func TestKit_Advance_SleepLongerThanTheQueueDelay(t *testing.T) {
	kit := durabletest.New(t, reminderGraph(30*24*time.Hour), durabletest.Options{})
	kit.Start("r1", Reminder{})
	kit.Advance(30*24*time.Hour - time.Minute)
	if got := kit.Visits("r1"); len(got) != 1 {
		t.Fatalf("after 30 days less a minute: visits %v, want the first only", got)
	}
	kit.Advance(30*24*time.Hour + time.Minute)
	if got := kit.Final("r1"); len(got.Sent) != 3 {
		t.Fatalf("sent %v", got.Sent)
	}
}

// Per-node policies hold under the kit, faults included: an injected failure of a node with
// its own retry policy is retried, and one with a failure route takes it.
func TestKit_NodePolicies_UnderFaults(t *testing.T) {
	b := durable.NewManifestBuilder[Reminder]("policies")
	b.SetEntrypoint("send")
	send := func(_ context.Context, r Reminder) (Reminder, error) {
		r.Sent = append(r.Sent, "sent")
		return r, nil
	}
	fallback := func(ctx context.Context, r Reminder) (Reminder, error) {
		info, _ := durable.StepInfoFrom(ctx)
		r.Sent = append(r.Sent, "fallback after "+info.Failure.Error)
		return r, nil
	}
	_ = b.AddStep("send", send, durable.WithRetry(durable.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second}), durable.WithNext("again"))
	_ = b.AddStep("again", send, durable.WithFailureRoute("fallback"), durable.Terminal())
	_ = b.AddStep("fallback", fallback, durable.Terminal())
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	kit := durabletest.New(t, g, durabletest.Options{Faults: map[string]int{"send": 1, "again": 1}})
	kit.Start("r1", Reminder{})
	kit.Advance(time.Second)
	if got := strings.Join(kit.Final("r1").Sent, ", "); got != "sent, fallback after "+durabletest.ErrInjected.Error() {
		t.Fatalf("sent %q", got)
	}
}
