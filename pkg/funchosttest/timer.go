package funchosttest

import (
	"context"
	"fmt"
	"strconv"
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
// defaults to true, and the host turns monitoring off for schedules that fire more often than
// once a minute, whatever useMonitor says).
func timerInfo(f *function, now time.Time) map[string]any {
	var status any
	if (f.Trigger.UseMonitor == nil || *f.Trigger.UseMonitor) && !subMinute(f.Trigger.Schedule) {
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

// subMinute reports whether a 6-field NCRONTAB schedule fires more than once within a minute:
// its seconds field matches more than one second.
func subMinute(schedule string) bool {
	fields := strings.Fields(schedule)
	if len(fields) != 6 {
		return false
	}
	seconds := map[int]bool{}
	for item := range strings.SplitSeq(fields[0], ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return false
			}
			step = n
		}
		lo, hi := 0, 59
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			x, err1 := strconv.Atoi(a)
			y, err2 := strconv.Atoi(b)
			if err1 != nil || err2 != nil {
				return false
			}
			lo, hi = x, y
		default:
			x, err := strconv.Atoi(rng)
			if err != nil {
				return false
			}
			lo, hi = x, x
			if hasStep {
				hi = 59
			}
		}
		for s := lo; s <= hi && s < 60; s += step {
			seconds[s] = true
		}
	}
	return len(seconds) > 1
}
