package examples

import (
	"context"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// ContentState is the state model of the content_classifier graph.
type ContentState struct {
	// Text is the message to classify; required.
	Text string `json:"text" durable:"required"`
	// Category is question, complaint or feedback.
	Category *string `json:"category"`
	// Sentiment is positive, negative or neutral.
	Sentiment *string `json:"sentiment"`
	// Response is the canned reply for the category.
	Response *string `json:"response"`
	// Summary sums up category, sentiment and response.
	Summary *string `json:"summary"`
}

const classifierPrefix = "examples.content_classifier.graph."

// Canned responses of content_classifier.
const (
	questionResponse  = "Thank you for your question. Our team will research this and get back to you within 24 hours."
	complaintResponse = "We're sorry to hear about your experience. A support specialist has been assigned to resolve this issue."
	feedbackResponse  = "Thank you for your feedback! We appreciate you taking the time to share."
)

// ContentClassifier builds the content_classifier graph: classify routes to handle_question,
// handle_complaint or handle_feedback, each of which leads to summarize (terminal).
func ContentClassifier() (durable.GraphRegistration[ContentState], error) {
	b := durable.NewManifestBuilder[ContentState]("content_classifier",
		durable.WithMetadata(map[string]any{"example": true, "profile": "routing"}))
	b.SetEntrypoint("classify")
	_ = b.AddStep("classify", classifyContent, durable.WithHandlerName(classifierPrefix+"classify"),
		durable.WithDecide(routeContent), durable.WithRouteName(classifierPrefix+"route_after_classify"))
	_ = b.AddStep("handle_question", respond(questionResponse), durable.WithHandlerName(classifierPrefix+"handle_question"), durable.WithNext("summarize"))
	_ = b.AddStep("handle_complaint", respond(complaintResponse), durable.WithHandlerName(classifierPrefix+"handle_complaint"), durable.WithNext("summarize"))
	_ = b.AddStep("handle_feedback", respond(feedbackResponse), durable.WithHandlerName(classifierPrefix+"handle_feedback"), durable.WithNext("summarize"))
	_ = b.AddStep("summarize", summarizeContent, durable.WithHandlerName(classifierPrefix+"summarize"), durable.Terminal())
	return b.Build()
}

// mustContentClassifier is ContentClassifier for package initialisation; it panics on error.
func mustContentClassifier() durable.GraphRegistration[ContentState] {
	return must(ContentClassifier())
}

var (
	questionWords  = []string{"how", "what", "why", "when"}
	complaintWords = []string{"broken", "terrible", "worst", "complaint", "angry"}
	negativeWords  = map[string]bool{"bad": true, "broken": true, "terrible": true, "worst": true, "angry": true, "hate": true}
	positiveWords  = map[string]bool{"great": true, "good": true, "love": true, "excellent": true, "thanks": true}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func classifyContent(_ context.Context, s ContentState) (ContentState, error) {
	lower := strings.ToLower(s.Text)
	category := "feedback"
	switch {
	case strings.Contains(s.Text, "?") || containsAny(lower, questionWords):
		category = "question"
	case containsAny(lower, complaintWords):
		category = "complaint"
	}
	words := strings.Fields(lower)
	sentiment := "neutral"
	if anyWord(words, negativeWords) {
		sentiment = "negative"
	} else if anyWord(words, positiveWords) {
		sentiment = "positive"
	}
	s.Category, s.Sentiment = &category, &sentiment
	return s, nil
}

func anyWord(words []string, set map[string]bool) bool {
	for _, w := range words {
		if set[w] {
			return true
		}
	}
	return false
}

func routeContent(_ context.Context, s ContentState) (durable.RouteDecision, error) {
	switch pyStr(s.Category, "") {
	case "question":
		return durable.Next("handle_question"), nil
	case "complaint":
		return durable.Next("handle_complaint"), nil
	}
	return durable.Next("handle_feedback"), nil
}

// respond returns a step setting the response. Each call site gets its own handler name; the
// closures share code, which the builder accepts because names differ.
func respond(text string) durable.StepFunc[ContentState] {
	return func(_ context.Context, s ContentState) (ContentState, error) {
		response := text // the state's own copy
		s.Response = &response
		return s, nil
	}
}

func summarizeContent(_ context.Context, s ContentState) (ContentState, error) {
	summary := "Category: " + pyStr(s.Category, "None") +
		" | Sentiment: " + pyStr(s.Sentiment, "None") + " | Response: " + pyStr(s.Response, "None")
	s.Summary = &summary
	return s, nil
}

// pyStr dereferences an optional string, returning none for nil (Python f-strings print None).
func pyStr(s *string, none string) string {
	if s == nil {
		return none
	}
	return *s
}
