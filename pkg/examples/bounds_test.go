package examples

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
)

// These tests hold the example graphs to the rule an example teaches: what a graph derives
// from its input is bounded, whatever the input's size, and an input past its stated bounds
// is refused before anything is stored.

// boundedSources returns MaxSources sources of MaxSourceBytes each.
func boundedSources() []string {
	out := make([]string, MaxSources)
	for i := range out {
		prefix := fmt.Sprintf("source-%02d-", i)
		out[i] = prefix + strings.Repeat("s", MaxSourceBytes-len(prefix))
	}
	return out
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 10, ""},
		{"Is Go fast?", 11, "Is Go fast?"},
		{"Is Go fast?", 10, "Is Go f…"},
		{"ééééé", 9, "ééé…"},
		{"ééééé", 8, "éé…"}, // 2-byte runes: none is cut in two
		{"ééééé", 10, "ééééé"},
		{"abcd", 3, "…"},
	} {
		got := excerpt(tt.in, tt.n)
		if got != tt.want || len(got) > max(tt.n, len(ellipsis)) || !utf8.ValidString(got) {
			t.Errorf("excerpt(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestKit_ResearchAgent_RefusesInputPastItsBounds: a question, a source or a reviewer (in the
// initial state or in an approval) one byte past its bound is refused with a message naming
// the bound, and nothing is stored; at the bound, each is taken
// (TestKit_ResearchAgent_DerivedTextIsBounded).
func TestKit_ResearchAgent_RefusesInputPastItsBounds(t *testing.T) {
	t.Parallel()
	kit := researchKit(t, 0)
	long := boundedSources()
	long[3] += "s"
	for _, tt := range []struct {
		name  string
		input ResearchState
		msg   string
	}{
		{"question", ResearchState{Question: strings.Repeat("q", MaxQuestionBytes+1), Sources: researchSources},
			fmt.Sprintf("question must be at most %d bytes, got %d", MaxQuestionBytes, MaxQuestionBytes+1)},
		{"1 MiB question", ResearchState{Question: strings.Repeat("q", 1<<20), Sources: researchSources},
			fmt.Sprintf("question must be at most %d bytes, got %d", MaxQuestionBytes, 1<<20)},
		{"source", ResearchState{Question: "q", Sources: long},
			fmt.Sprintf("source 3 must be at most %d bytes, got %d", MaxSourceBytes, MaxSourceBytes+1)},
		{"reviewer", ResearchState{Question: "q", Sources: researchSources, Reviewer: strings.Repeat("r", MaxReviewerBytes+1)},
			fmt.Sprintf("reviewer must be at most %d bytes, got %d", MaxReviewerBytes, MaxReviewerBytes+1)},
	} {
		id := strings.ReplaceAll(tt.name, " ", "-")
		if _, err := kit.TryStart(id, tt.input); !errors.Is(err, durable.ErrInvalidState) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s past its bound: %v, want ErrInvalidState: %s", tt.name, err, tt.msg)
		}
		if _, err := kit.Engine().GetRun(t.Context(), id); !errors.Is(err, durabletest.ErrRunNotFound) {
			t.Errorf("the refused start of a %s past its bound stored a run: %v", tt.name, err)
		}
	}
	startResearch(t, kit, "r1")
	rows := len(kit.History("r1"))
	msg := fmt.Sprintf("reviewer must be at most %d bytes, got %d", MaxReviewerBytes, MaxReviewerBytes+1)
	payload, _ := json.Marshal(Approval{Approved: true, Reviewer: strings.Repeat("r", MaxReviewerBytes+1)})
	if err := kit.Engine().RaiseEvent(t.Context(), "r1", "approval", payload); err == nil || !strings.Contains(err.Error(), msg) {
		t.Fatalf("an approval past the reviewer's bound: %v, want %s", err, msg)
	}
	kit.Drive()
	if n := len(kit.History("r1")); n != rows {
		t.Fatalf("the refused approval wrote %d history rows", n-rows)
	}
}

// TestKit_ResearchAgent_DerivedTextIsBounded: with every input at its bound (the question of
// 2-byte runes), each summary and the draft quote an excerpt of at most maxQuoteBytes of the
// question, cut between runes; through a rejection, a revision and an approval the state
// stays within a small multiple of the input, and so does every history row. A short
// question is quoted whole.
func TestKit_ResearchAgent_DerivedTextIsBounded(t *testing.T) {
	t.Parallel()
	kit := researchKit(t, 0)
	question := strings.Repeat("é", MaxQuestionBytes/2)
	reviewer := strings.Repeat("r", MaxReviewerBytes)
	in := ResearchState{Question: question, Sources: boundedSources()}
	kit.Start("full", in)
	kit.Advance(time.Second) // the flaky branch's retry
	if ev, ok := kit.Run("full").WaitingFor(); !ok || ev != "approval" {
		t.Fatalf("at the bounds: waiting for %q (%v), status %s %s", ev, ok, kit.Run("full").RuntimeStatus, kit.Run("full").Output)
	}
	kit.Send("full", "approval", Approval{Approved: false, Reviewer: reviewer})
	run := kit.Send("full", "approval", Approval{Approved: true, Reviewer: reviewer})
	if run.RuntimeStatus != durabletest.StatusCompleted {
		t.Fatalf("at the bounds: %s %s", run.RuntimeStatus, run.Output)
	}
	final := kit.Final("full")
	quoted := `"` + excerpt(question, maxQuoteBytes) + `"`
	if len(final.Findings) != MaxSources || final.Revisions != 1 {
		t.Fatalf("final: %d findings, %d revisions", len(final.Findings), final.Revisions)
	}
	for i, f := range final.Findings {
		if !strings.Contains(f.Summary, quoted) || len(f.Summary) > 2*maxQuoteBytes+32 || !utf8.ValidString(f.Summary) {
			t.Fatalf("finding %d: a summary of %d bytes %q, want at most %d quoting %s", i, len(f.Summary), f.Summary, 2*maxQuoteBytes+32, quoted)
		}
	}
	if !strings.HasPrefix(final.Draft, "Answer to "+quoted+" (revision 1):") || !strings.HasSuffix(final.Published, "\nApproved by "+excerpt(reviewer, maxQuoteBytes)+".") {
		t.Fatalf("draft %.200q…, published …%q", final.Draft, final.Published[max(0, len(final.Published)-200):])
	}
	raw, _ := json.Marshal(in)
	limit := 4 * len(raw)
	state, _ := json.Marshal(final)
	largest := 0
	for _, h := range kit.History("full") {
		largest = max(largest, len(h.Data))
	}
	t.Logf("input %d bytes: state %d bytes, largest history row %d bytes", len(raw), len(state), largest)
	if len(state) > limit || largest > limit {
		t.Fatalf("an input of %d bytes: state %d bytes, largest history row %d bytes; want at most %d", len(raw), len(state), largest, limit)
	}

	kit.Start("short", ResearchState{Question: "Is Go fast?", Sources: []string{"arxiv"}})
	if f := joinedState(t, kit, "short").Findings; len(f) != 1 || f[0].Summary != `arxiv: 2 passages on "Is Go fast?"` {
		t.Fatalf("short question: findings %+v", f)
	}
}

// TestKit_Examples_LargeInputsAreNotAmplified: data_pipeline, content_classifier and
// support_agent started with a 256 KiB input end with a state that holds their input once
// and a bounded rest: each quotes at most an excerpt of what it was given. (support_agent's
// final reply quotes its approval's reviewer whole, once: the engine's tests of large event
// payloads follow that value to the output.)
func TestKit_Examples_LargeInputsAreNotAmplified(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 256<<10)
	quiet := durabletest.Options{Logger: slog.New(slog.DiscardHandler)}
	const rest = 2 << 10 // what a graph may add to its input: canned text, records, excerpts
	check := func(t *testing.T, name string, input, final any) {
		t.Helper()
		in, _ := json.Marshal(input)
		out, _ := json.Marshal(final)
		if len(out) > len(in)+rest {
			t.Fatalf("%s: an input of %d bytes grew to %d bytes of state, want at most %d", name, len(in), len(out), len(in)+rest)
		}
	}
	t.Run("data_pipeline", func(t *testing.T) {
		kit := durabletest.New(t, MustDataPipeline(), quiet)
		in := PipelineState{SourceURL: "https://example.com/" + big}
		if run := kit.Start("p", in); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("%s %s", run.RuntimeStatus, run.Output)
		}
		check(t, "data_pipeline", in, kit.Final("p"))
	})
	t.Run("content_classifier", func(t *testing.T) {
		kit := durabletest.New(t, mustContentClassifier(), quiet)
		in := ContentState{Text: "How do I " + big + "?"}
		if run := kit.Start("c", in); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("%s %s", run.RuntimeStatus, run.Output)
		}
		check(t, "content_classifier", in, kit.Final("c"))
	})
	t.Run("support_agent", func(t *testing.T) {
		kit := durabletest.New(t, MustSupportAgent(), quiet)
		in := SupportState{UserMessage: "I want a refund " + big}
		kit.Start("s", in)
		if run := kit.Send("s", "approval", map[string]any{"approved": true, "reviewer": "ana"}); run.RuntimeStatus != durabletest.StatusCompleted {
			t.Fatalf("%s %s", run.RuntimeStatus, run.Output)
		}
		check(t, "support_agent", in, kit.Final("s"))
	})
}
