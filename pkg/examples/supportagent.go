package examples

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// SupportState is the state model of the support_agent graph.
type SupportState struct {
	// UserMessage is the customer's message; required.
	UserMessage string `json:"user_message" durable:"required"`
	// NeedsHuman is set when the message mentions a refund or legal matter.
	NeedsHuman bool `json:"needs_human"`
	// Approved is the reviewer's decision, null until an approval event arrives.
	Approved *bool `json:"approved"`
	// Reviewer is who approved.
	Reviewer *string `json:"reviewer"`
	// DraftResponse is the drafted reply.
	DraftResponse *string `json:"draft_response"`
	// FinalResponse is the reply sent.
	FinalResponse *string `json:"final_response"`
	// Tags classify the request, sorted.
	Tags []string `json:"tags"`
}

const supportPrefix = "examples.support_agent.graph."

// Draft replies of support_agent.
const (
	manualReviewReply = "Your request requires manual review before we can proceed."
	refundReply       = "We have queued your refund review. A team member will validate the invoice and confirm next steps."
	generalReply      = "Thanks for reaching out. We have prepared a response for your request."
)

// SupportAgent builds the support_agent graph: classify_request routes either to draft_reply
// or, for refund and legal requests without approval, waits for the "approval" event first;
// draft_reply → finalize_reply (terminal).
func SupportAgent() (durable.GraphRegistration[SupportState], error) {
	b := durable.NewManifestBuilder[SupportState]("support_agent",
		durable.WithMetadata(map[string]any{"example": true, "profile": "approval"}))
	b.SetEntrypoint("classify_request")
	_ = b.AddStep("classify_request", classifyRequest, durable.WithHandlerName(supportPrefix+"classify_request"),
		durable.WithDecide(routeSupport), durable.WithRouteName(supportPrefix+"route_after_classify"))
	_ = b.AddStep("draft_reply", draftReply, durable.WithHandlerName(supportPrefix+"draft_reply"), durable.WithNext("finalize_reply"))
	_ = b.AddStep("finalize_reply", finalizeReply, durable.WithHandlerName(supportPrefix+"finalize_reply"), durable.Terminal())
	// The approval keeps the map-of-updates form (durable.AddEventHandler, update.go): it
	// ports a handler that reads any JSON body with Python's truthiness, which a typed
	// payload (durable.OnEvent) would refuse before the event is stored.
	_ = b.AddEventHandler("approval", mergeApprovalEvent)
	return b.Build()
}

// MustSupportAgent is SupportAgent for package initialisation; it panics on error.
func MustSupportAgent() durable.GraphRegistration[SupportState] {
	return must(SupportAgent())
}

func classifyRequest(_ context.Context, s SupportState) (SupportState, error) {
	text := strings.ToLower(s.UserMessage)
	tag := "general"
	if strings.Contains(text, "refund") {
		tag = "refund"
	}
	tags := append(slices.Clone(s.Tags), tag)
	slices.Sort(tags)
	s.Tags = slices.Compact(tags)
	s.NeedsHuman = strings.Contains(text, "refund") || strings.Contains(text, "legal")
	return s, nil
}

func routeSupport(_ context.Context, s SupportState) (durable.RouteDecision, error) {
	if s.NeedsHuman && (s.Approved == nil || !*s.Approved) {
		return durable.WaitForEvent("approval", "draft_reply").WithNote("awaiting human approval"), nil
	}
	return durable.Next("draft_reply"), nil
}

// mergeApprovalEvent applies {"approved": ..., "reviewer": ...}; a non-object payload counts
// as {}. approved follows Python truthiness.
func mergeApprovalEvent(_ context.Context, _ SupportState, payload json.RawMessage) (any, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(payload, &obj); err != nil || obj == nil {
		obj = map[string]json.RawMessage{}
	}
	reviewer := obj["reviewer"]
	if reviewer == nil {
		reviewer = json.RawMessage("null")
	}
	return durable.Update{"approved": truthy(obj["approved"]), "reviewer": reviewer}, nil
}

// truthy applies Python truthiness to a JSON value: false, null, 0, "", [], {} and absent are
// false.
func truthy(raw json.RawMessage) bool {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

func draftReply(_ context.Context, s SupportState) (SupportState, error) {
	draft := generalReply
	switch {
	case s.NeedsHuman && (s.Approved == nil || !*s.Approved):
		draft = manualReviewReply
	case slices.Contains(s.Tags, "refund"):
		draft = refundReply
	}
	s.DraftResponse = &draft
	return s, nil
}

func finalizeReply(_ context.Context, s SupportState) (SupportState, error) {
	final := pyStr(s.DraftResponse, "")
	if r := pyStr(s.Reviewer, ""); r != "" {
		final += " Reviewer: " + r + "."
	}
	final = strings.TrimSpace(final)
	s.FinalResponse = &final
	return s, nil
}
