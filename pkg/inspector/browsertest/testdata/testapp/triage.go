package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// TriageState is the state of the triage graph.
type TriageState struct {
	// Ticket is the ticket's text; the child run classifies it.
	Ticket string `json:"ticket" durable:"required"`
	// Sources are looked up at once, one branch each; the branch at index 1 fails its first
	// attempt and retries a second later.
	Sources []string `json:"sources"`
	// SleepSeconds is how long the run sleeps after the approval (default 1).
	SleepSeconds int `json:"sleep_seconds"`
	// FailAtReply makes reply fail for good: the run ends Failed.
	FailAtReply bool `json:"fail_at_reply"`
	// Notes holds one note per source, in the order of Sources.
	Notes []string `json:"notes"`
	// Classification is the child run's final state (content_classifier).
	Classification map[string]any `json:"classification"`
	// Approved is the "approval" event's decision.
	Approved *bool `json:"approved"`
	// Escalated is set when nobody approved within a day.
	Escalated bool `json:"escalated"`
	// Reply is the answer sent.
	Reply string `json:"reply"`
}

// Triage builds the triage graph:
//
//	intake ─┬─ lookup ─┬─ classify ─(child run: content_classifier)─ decide ─(wait "approval", 24 h)─ cool_down ─(sleep)─ reply
//	        └─ lookup ─┘                                               └─ timed out: escalate ─(wait "approval")─┘
func Triage() (durable.GraphRegistration[TriageState], error) {
	b := durable.NewManifestBuilder[TriageState]("triage")
	b.SetEntrypoint("intake")
	_ = b.AddStep("intake", keep, durable.WithDecide(func(_ context.Context, s TriageState) (durable.RouteDecision, error) {
		if len(s.Sources) == 0 {
			return durable.Next("classify"), nil
		}
		return durable.Map("classify", "lookup", s.Sources), nil
	}))
	_ = b.AddStep("lookup", lookup, durable.WithRetry(durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}))
	_ = b.Reduce("notes", durable.Append)
	_ = b.AddStep("classify", keep, durable.WithDecide(func(_ context.Context, s TriageState) (durable.RouteDecision, error) {
		return durable.StartChild("content_classifier", map[string]any{"text": s.Ticket}, "decide").Into("classification"), nil
	}))
	_ = b.AddStep("decide", keep, durable.WithDecide(func(context.Context, TriageState) (durable.RouteDecision, error) {
		return durable.WaitForEvent("approval", "cool_down").Within(24*time.Hour, "escalate").WithNote("awaiting approval"), nil
	}))
	_ = b.AddStep("escalate", func(_ context.Context, s TriageState) (TriageState, error) {
		s.Escalated = true
		return s, nil
	}, durable.WithDecide(func(context.Context, TriageState) (durable.RouteDecision, error) {
		return durable.WaitForEvent("approval", "cool_down"), nil
	}))
	_ = b.AddStep("cool_down", keep, durable.WithDecide(func(_ context.Context, s TriageState) (durable.RouteDecision, error) {
		return durable.Sleep(time.Duration(max(s.SleepSeconds, 1))*time.Second, "reply"), nil
	}))
	_ = b.AddStep("reply", reply, durable.Terminal())
	_ = durable.OnEvent(b, "approval", func(_ context.Context, s TriageState, p struct {
		Approved bool `json:"approved"`
	}) (TriageState, error) {
		s.Approved = &p.Approved
		return s, nil
	})
	return b.Build()
}

func keep(_ context.Context, s TriageState) (TriageState, error) { return s, nil }

// lookup notes the branch's source; the branch at index 1 fails its first attempt.
func lookup(ctx context.Context, s TriageState) (TriageState, error) {
	source, err := durable.BranchItem[string](ctx)
	if err != nil {
		return s, durable.NonRetryable(err)
	}
	branch, _ := durable.BranchFrom(ctx)
	info, _ := durable.StepInfoFrom(ctx)
	if branch.Index == 1 && info.Attempt <= 1 {
		return s, fmt.Errorf("lookup %s: backend busy", source)
	}
	s.Notes = append(s.Notes, "looked up "+source)
	return s, nil
}

// errReplyRefused is reply's failure when the input asks for it.
var errReplyRefused = errors.New("reply refused: the mail gateway is down")

func reply(_ context.Context, s TriageState) (TriageState, error) {
	if s.FailAtReply {
		return s, durable.NonRetryable(errReplyRefused)
	}
	s.Reply = fmt.Sprintf("Thanks, your ticket is handled (approved: %v).", s.Approved != nil && *s.Approved)
	return s, nil
}
