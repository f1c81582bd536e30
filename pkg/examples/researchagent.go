package examples

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// ResearchState is the state model of the research_agent graph.
type ResearchState struct {
	// Question is what to research; required, not blank, at most MaxQuestionBytes.
	Question string `json:"question" durable:"required"`
	// Sources are searched at once, one parallel branch each; required, 1 to MaxSources of
	// them, none blank or longer than MaxSourceBytes.
	Sources []string `json:"sources" durable:"required"`
	// Findings holds one entry per source, in the order of Sources, whatever order the
	// searches finished in (the Append reducer joins them in branch order).
	Findings []Finding `json:"findings"`
	// Draft is the answer drafted from the findings; it quotes an excerpt of the question.
	Draft string `json:"draft"`
	// Approved and Reviewer are the reviewer's decision on the current draft (the "approval"
	// event); Approved is null while the draft awaits it.
	Approved *bool  `json:"approved"`
	Reviewer string `json:"reviewer"`
	// Revisions counts the drafts the reviewer rejected.
	Revisions int `json:"revisions"`
	// Escalated is set when nobody reviewed a draft within ReviewWindow.
	Escalated bool `json:"escalated"`
	// Published is the published answer; empty unless a draft was approved.
	Published string `json:"published"`
}

// Bounds of research_agent's input, in bytes.
const (
	// MaxSources bounds the sources of one research_agent run (each is a branch of the
	// fan-out).
	MaxSources = 16
	// MaxQuestionBytes bounds the question: 4 KiB.
	MaxQuestionBytes = 4 << 10
	// MaxSourceBytes bounds each source's name.
	MaxSourceBytes = 256
	// MaxReviewerBytes bounds the reviewer's name of an "approval" event.
	MaxReviewerBytes = 256
)

// Validate checks the question, the sources and the reviewer: every state of a run is
// checked, so a start with a blank question or one past MaxQuestionBytes, no source, more
// than MaxSources, a blank one or one past MaxSourceBytes is refused (400 "invalid initial
// state") before anything is stored.
func (s *ResearchState) Validate() error {
	switch {
	case strings.TrimSpace(s.Question) == "":
		return errors.New("question must not be blank")
	case len(s.Question) > MaxQuestionBytes:
		return fmt.Errorf("question must be at most %d bytes, got %d", MaxQuestionBytes, len(s.Question))
	case len(s.Sources) == 0:
		return errors.New("sources must name at least one source")
	case len(s.Sources) > MaxSources:
		return fmt.Errorf("sources must name at most %d sources, got %d", MaxSources, len(s.Sources))
	case len(s.Reviewer) > MaxReviewerBytes:
		return fmt.Errorf("reviewer must be at most %d bytes, got %d", MaxReviewerBytes, len(s.Reviewer))
	}
	for i, src := range s.Sources {
		switch {
		case strings.TrimSpace(src) == "":
			return fmt.Errorf("source %d is blank", i)
		case len(src) > MaxSourceBytes:
			return fmt.Errorf("source %d must be at most %d bytes, got %d", i, MaxSourceBytes, len(src))
		}
	}
	return nil
}

// Finding is what one search branch found for its source.
type Finding struct {
	// Source is the source searched.
	Source string `json:"source"`
	// Summary is what it said about the question; it quotes an excerpt of the question, not
	// all of it.
	Summary string `json:"summary"`
	// Attempts is how many attempts the search took.
	Attempts int `json:"attempts"`
}

// Approval is the payload of research_agent's "approval" event.
type Approval struct {
	// Approved is the reviewer's decision; required.
	Approved bool `json:"approved" durable:"required"`
	// Reviewer names who decided; at most MaxReviewerBytes.
	Reviewer string `json:"reviewer"`
}

// Validate refuses a reviewer past MaxReviewerBytes: the event is a 400 and is not stored.
func (a Approval) Validate() error {
	if len(a.Reviewer) > MaxReviewerBytes {
		return fmt.Errorf("reviewer must be at most %d bytes, got %d", MaxReviewerBytes, len(a.Reviewer))
	}
	return nil
}

// ReviewWindow is how long research_agent waits for the reviewer before it escalates.
const ReviewWindow = 72 * time.Hour

// MaxRevisions is how many rejected drafts research_agent revises: the rejection after them
// ends the run unpublished.
const MaxRevisions = 2

// FlakyBranch is the index of the search branch whose first attempt fails (errFlakySource),
// so that every run with two sources or more shows a retry.
const FlakyBranch = 1

// errFlakySource is the first attempt's error of the flaky search branch.
var errFlakySource = errors.New("search backend busy, try again")

// searchRetry is the search node's own retry policy: three attempts, one second apart, then
// two.
var searchRetry = durable.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second}

// searchTimeout bounds each attempt of a search.
const searchTimeout = 30 * time.Second

// ResearchAgent builds the research_agent graph, the showcase of agent-shaped graphs:
//
//	plan ─┬─ search(sources[0]) ─┬─ draft ─ wait for "approval" (72 h) ─ review ─┬─ publish
//	      ├─ search(sources[1]) ─┤          │ timed out                    ▲     ├─ draft again (rejected)
//	      └─ search(...)        ─┘          escalate ─ wait for "approval" ┘     └─ end unpublished
//
// plan fans out one search branch per source (durable.Map). search has a retry policy and a
// timeout of its own (durable.WithRetry, durable.WithTimeout); the branch at FlakyBranch fails
// its first attempt, so every run with two sources or more retries it. Each search emits a
// "searched" event (durable.Emit) and adds its finding; the branches join at draft with the
// findings in the order of the sources (durable.Append). draft waits for the reviewer's
// "approval" event (a typed durable.OnEvent handler) for ReviewWindow, then escalates:
// escalate marks the run and waits again, without a deadline of its own. review publishes an
// approved draft, sends a rejected one back to draft while Revisions <= MaxRevisions, and
// ends the run unpublished after that. Walked through in docs/examples.md.
//
// The graph is deterministic (no model, no network): the searches make up their summaries.
// Its handlers are named after their nodes (durable's default names).
func ResearchAgent() (durable.GraphRegistration[ResearchState], error) {
	b := durable.NewManifestBuilder[ResearchState]("research_agent",
		durable.WithMetadata(map[string]any{"example": true, "profile": "agent"}))
	b.SetEntrypoint("plan")
	_ = b.AddStep("plan", planResearch, durable.WithDecide(fanOutSearches))
	_ = b.AddStep("search", searchSource, durable.WithRetry(searchRetry), durable.WithTimeout(searchTimeout))
	_ = b.Reduce("findings", durable.Append)
	_ = b.AddStep("draft", draftAnswer, durable.WithDecide(awaitApproval))
	_ = b.AddStep("review", review, durable.WithDecide(decideReview))
	_ = b.AddStep("publish", publish, durable.Terminal())
	_ = b.AddStep("escalate", escalate, durable.WithDecide(awaitEscalatedApproval))
	_ = durable.OnEvent(b, "approval", applyApproval)
	return b.Build()
}

// MustResearchAgent is ResearchAgent for package initialisation; it panics on error.
func MustResearchAgent() durable.GraphRegistration[ResearchState] {
	return must(ResearchAgent())
}

// planResearch starts the research afresh. A real agent would rewrite the question into one
// query per source here; the fan-out is its route's.
func planResearch(_ context.Context, s ResearchState) (ResearchState, error) {
	s.Findings = []Finding{}
	return s, nil
}

// fanOutSearches visits search once per source, all at once, and joins at draft.
func fanOutSearches(_ context.Context, s ResearchState) (durable.RouteDecision, error) {
	return durable.Map("draft", "search", s.Sources), nil
}

// searchSource searches the branch's source (its item) and adds one finding, whose summary
// quotes excerpts of the source and the question: sixteen branches that each quoted the whole
// question would multiply it by sixteen. The branch at FlakyBranch fails its first attempt
// (retried under the node's policy). It runs in a branch only: called otherwise it fails for
// good (durable.NonRetryable).
func searchSource(ctx context.Context, s ResearchState) (ResearchState, error) {
	source, err := durable.BranchItem[string](ctx)
	if err != nil {
		return s, durable.NonRetryable(fmt.Errorf("search: %w", err))
	}
	branch, _ := durable.BranchFrom(ctx)
	info, _ := durable.StepInfoFrom(ctx)
	attempt := max(info.Attempt, 1)
	if branch.Index == FlakyBranch && attempt == 1 {
		return s, fmt.Errorf("search %s: %w", source, errFlakySource)
	}
	if err := durable.Emit(ctx, "searched", map[string]any{"source": source, "attempt": attempt}); err != nil {
		return s, err
	}
	s.Findings = append(s.Findings, Finding{
		Source:   source,
		Summary:  fmt.Sprintf("%s: %d passages on %q", excerpt(source, maxQuoteBytes), 2+len(source)%5, excerpt(s.Question, maxQuoteBytes)),
		Attempts: attempt,
	})
	return s, nil
}

// draftAnswer drafts an answer from the findings, quoting an excerpt of the question and each
// summary (bounded already); the new draft awaits a decision. A child run (a classifier of
// the draft, say) would start from here, before the wait.
func draftAnswer(_ context.Context, s ResearchState) (ResearchState, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Answer to %q", excerpt(s.Question, maxQuoteBytes))
	if s.Revisions > 0 {
		fmt.Fprintf(&b, " (revision %d)", s.Revisions)
	}
	b.WriteString(":")
	for _, f := range s.Findings {
		b.WriteString("\n- " + f.Summary)
	}
	s.Draft, s.Approved, s.Reviewer = b.String(), nil, ""
	return s, nil
}

// awaitApproval waits for the reviewer's "approval" for ReviewWindow, then escalates.
func awaitApproval(context.Context, ResearchState) (durable.RouteDecision, error) {
	return durable.WaitForEvent("approval", "review").Within(ReviewWindow, "escalate").
		WithNote("awaiting the reviewer's approval"), nil
}

// applyApproval records the reviewer's decision.
func applyApproval(_ context.Context, s ResearchState, p Approval) (ResearchState, error) {
	s.Approved, s.Reviewer = &p.Approved, p.Reviewer
	return s, nil
}

// escalate marks a draft nobody reviewed within ReviewWindow, and tells whoever follows the run.
func escalate(ctx context.Context, s ResearchState) (ResearchState, error) {
	info, _ := durable.StepInfoFrom(ctx)
	if err := durable.Emit(ctx, "escalated", map[string]any{"waited_for": info.TimedOutWaitingFor, "after": ReviewWindow.String()}); err != nil {
		return s, err
	}
	s.Escalated = true
	return s, nil
}

// awaitEscalatedApproval waits for the decision again, under the graph's wait policy (none in
// the example app: until the decision comes or the run is cancelled).
func awaitEscalatedApproval(context.Context, ResearchState) (durable.RouteDecision, error) {
	return durable.WaitForEvent("approval", "review").WithNote("escalated: awaiting approval"), nil
}

// review counts a rejection.
func review(_ context.Context, s ResearchState) (ResearchState, error) {
	if !approved(s) {
		s.Revisions++
	}
	return s, nil
}

// decideReview publishes an approved draft, revises a rejected one up to MaxRevisions times,
// and ends the run unpublished after that.
func decideReview(_ context.Context, s ResearchState) (durable.RouteDecision, error) {
	switch {
	case approved(s):
		return durable.Next("publish"), nil
	case s.Revisions <= MaxRevisions:
		return durable.Next("draft"), nil
	}
	return durable.Complete(fmt.Sprintf("draft rejected %d times: not published", s.Revisions)), nil
}

func approved(s ResearchState) bool { return s.Approved != nil && *s.Approved }

// publish publishes the approved draft, signed with an excerpt of the reviewer's name.
func publish(_ context.Context, s ResearchState) (ResearchState, error) {
	s.Published = s.Draft
	if s.Reviewer != "" {
		s.Published += "\nApproved by " + excerpt(s.Reviewer, maxQuoteBytes) + "."
	}
	return s, nil
}
