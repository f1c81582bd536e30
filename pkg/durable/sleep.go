package durable

import (
	"time"
)

// ActionSleep pauses the run durably, then continues at RouteDecision.NextNode: at
// RouteDecision.Until, or RouteDecision.Delay after the decision commits. No worker waits
// through the sleep (the run's next work item is delayed), so a sleep may last days or months.
const ActionSleep RouteAction = "sleep"

// Bounds of a sleep, so that its wake-up time stays a valid timestamp.
const (
	// MaxSleep is the longest Delay of a sleep: 100 years.
	MaxSleep = 100 * 365 * 24 * time.Hour
)

// maxSleepUntil bounds RouteDecision.Until (nanosecond timestamps end in 2262).
var maxSleepUntil = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// Sleep returns a decision to pause the run for d, then continue at next. The sleep is
// durable: it survives restarts and deploys, and the run holds no worker while it sleeps. The
// history records a sleep_started row ({"until", "next_node"}); in a test, the kit's Advance
// fires it:
//
//	return durable.Sleep(24*time.Hour, "remind"), nil
//
// d counts from the moment the step commits; d <= 0 continues at once (still through a
// sleep_started row). d must be at most MaxSleep.
func Sleep(d time.Duration, next string) RouteDecision {
	return RouteDecision{Action: ActionSleep, NextNode: next, Delay: d}
}

// SleepUntil returns a decision to pause the run until t, then continue at next (see Sleep). A
// t in the past continues at once; t must be before 2200.
func SleepUntil(t time.Time, next string) RouteDecision {
	return RouteDecision{Action: ActionSleep, NextNode: next, Until: t}
}

// WakeTime returns when a sleep decided at now ends: Until when set, else now plus Delay.
func (d RouteDecision) WakeTime(now time.Time) time.Time {
	if !d.Until.IsZero() {
		return d.Until
	}
	return now.Add(d.Delay)
}

// normalizeSleep validates a sleep decision and clears the fields a sleep does not use.
// Errors wrap ErrInvalidRouteDecision.
func (d RouteDecision) normalizeSleep() (RouteDecision, error) {
	d.EventName, d.ResumeNode = "", ""
	switch {
	case d.NextNode == "":
		return d, newError(ErrInvalidRouteDecision, "action 'sleep' requires next_node")
	case d.Delay != 0 && !d.Until.IsZero():
		return d, newError(ErrInvalidRouteDecision, "sleep takes a delay or an until time, not both")
	case d.Delay < 0:
		return d, newError(ErrInvalidRouteDecision, "sleep delay must not be negative")
	case d.Delay > MaxSleep:
		return d, newError(ErrInvalidRouteDecision, "sleep delay must be at most 100 years")
	case !d.Until.Before(maxSleepUntil):
		return d, newError(ErrInvalidRouteDecision, "sleep until must be before 2200-01-01")
	}
	return d, nil
}

// sleepWire sets the members only a sleep writes: until (RFC 3339) and delay_ms.
func (d RouteDecision) sleepWire(w *routeDecisionWire) {
	if d.Action != ActionSleep {
		return
	}
	if !d.Until.IsZero() {
		s := d.Until.UTC().Format(time.RFC3339Nano)
		w.Until = &s
	}
	if d.Delay != 0 {
		ms := d.Delay.Milliseconds()
		w.DelayMS = &ms
	}
}

// sleepFields reads the members only a sleep has into d, a sleep (other actions ignore them,
// as any unknown key). Errors wrap ErrInvalidRouteDecision.
func (w *routeDecisionWire) sleepFields(d *RouteDecision) error {
	if d.Action != ActionSleep {
		return nil
	}
	if w.Until != nil && *w.Until != "" {
		t, err := time.Parse(time.RFC3339Nano, *w.Until)
		if err != nil {
			return newError(ErrInvalidRouteDecision, "sleep until must be an RFC 3339 time")
		}
		d.Until = t
	}
	if w.DelayMS != nil {
		// Out-of-range values are clamped just past the bounds, for normalizeSleep to refuse.
		d.Delay = time.Duration(min(max(*w.DelayMS, -1), MaxSleep.Milliseconds()+1)) * time.Millisecond
	}
	return nil
}
