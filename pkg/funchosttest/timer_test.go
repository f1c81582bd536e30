package funchosttest_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// On-demand timer ticks with the TimerInfo object.
func TestEmulator_TimerPayload_MatchesGolden(t *testing.T) {
	rec := &recorder{respond: nil}
	root := writeApp(t, "", map[string]string{
		"tick":   `{"bindings":[{"name":"timer","type":"timerTrigger","direction":"in","schedule":"0 */5 * * * *","runOnStartup":false,"useMonitor":true}]}`,
		"nomon":  `{"bindings":[{"name":"timer","type":"timerTrigger","direction":"in","schedule":"0 */5 * * * *","useMonitor":false}]}`,
		"httpfn": httpFunc("anonymous", "h"),
	})
	e := start(t, root, rec, funchosttest.Options{})
	if err := e.TriggerTimer(t.Context(), "tick"); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "timer", rec.last(t))
	if err := e.TriggerTimer(t.Context(), "nomon"); err != nil {
		t.Fatal(err)
	}
	info := rec.last(t).Payload["Data"].(map[string]any)["timer"].(map[string]any)
	if v, ok := info["ScheduleStatus"]; !ok || v != nil {
		t.Errorf("ScheduleStatus without monitor = %v (present %v), want null", v, ok)
	}
	for _, bad := range []string{"httpfn", "missing"} {
		if err := e.TriggerTimer(t.Context(), bad); err == nil {
			t.Errorf("TriggerTimer(%q) succeeded", bad)
		}
	}
}

func TestEmulator_TriggerTimer_ThroughFunchost(t *testing.T) {
	app := funchost.NewFunctionApp()
	fail := false
	err := app.HandleTimer(funchost.TimerFunction{Name: "sweep", Schedule: "0 */5 * * * *", UseMonitor: true,
		Outputs: []funchost.OutputBinding{{Name: "out", Type: "queue", QueueName: "swept"}},
		Handler: func(_ context.Context, info funchost.TimerInfo) (funchost.Outputs, error) {
			if fail {
				return nil, errors.New("boom")
			}
			if info.ScheduleStatus == nil || info.IsPastDue || !info.Schedule.AdjustForDST {
				return nil, errors.New("unexpected timer info")
			}
			return funchost.Outputs{"out": []string{"tick one", "tick two"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e := funchosttest.StartApp(t, app, funchosttest.Options{})
	if err := e.TriggerTimer(t.Context(), "sweep"); err != nil {
		t.Fatal(err)
	}
	if got, want := e.QueueContents("swept"), []string{"tick one", "tick two"}; !reflect.DeepEqual(got, want) {
		t.Errorf("swept = %q, want %q", got, want)
	}
	fail = true
	if err := e.TriggerTimer(t.Context(), "sweep"); !errors.Is(err, funchosttest.ErrInvocationFailed) {
		t.Errorf("failing timer: err = %v, want ErrInvocationFailed", err)
	}
}
