package hosttest

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// TriggerTimer invokes a timer-triggered function once, on demand, with the host's TimerInfo
// object, and applies its outputs. It returns ErrInvocationFailed (wrapped) when the handler
// fails the invocation.
func (e *Emulator) TriggerTimer(ctx context.Context, function string) error {
	f, ok := e.function(function)
	if !ok || !strings.EqualFold(f.Trigger.Type, "timerTrigger") {
		return fmt.Errorf("trigger timer %q: no such timer function", function)
	}
	res, err := e.invoke(ctx, f, payload{
		Data:     map[string]any{f.Trigger.Name: timerInfo(f, time.Now().UTC())},
		Metadata: map[string]any{"sys": sysMetadata(f.Name)},
	})
	if err != nil {
		return fmt.Errorf("trigger timer %q: %w", function, err)
	}
	if err := e.applyOutputs(f, res); err != nil {
		return fmt.Errorf("trigger timer %q: %w", function, err)
	}
	return nil
}

// timerInfo is the TimerInfo value: ScheduleStatus is null without a monitor (useMonitor
// defaults to true).
func timerInfo(f *function, now time.Time) map[string]any {
	var status any
	if f.Trigger.UseMonitor == nil || *f.Trigger.UseMonitor {
		status = map[string]any{
			"Last":        dotnetTime(now.Add(-time.Minute)),
			"Next":        dotnetTime(now.Add(time.Minute)),
			"LastUpdated": dotnetTime(now.Add(-time.Minute)),
		}
	}
	return map[string]any{
		"Schedule":       map[string]any{"AdjustForDST": true},
		"ScheduleStatus": status,
		"IsPastDue":      false,
	}
}
