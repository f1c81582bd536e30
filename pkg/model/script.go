package model

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/message"
)

// Func is a Model written as a function.
type Func func(ctx context.Context, req Request) (Response, error)

// Generate calls f.
func (f Func) Generate(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }

// Script is a deterministic model: it answers each request with the next of its replies, in
// order, and remembers the requests. It streams a reply's text word by word when asked and
// reports a usage counted in words (the request's words in, the reply's out), so that tests
// of token totals have figures to check. It is safe for concurrent use; past its last reply
// it fails. For tests, and for an app that runs with no vendor.
type Script struct {
	mu       sync.Mutex
	replies  []message.Message
	requests []Request
}

// NewScript returns a Script that answers with replies in order; each is an AI message
// (message.AI), whose tool calls the model then asks for.
func NewScript(replies ...message.Message) *Script {
	return &Script{replies: replies}
}

// Generate answers with the next reply.
func (s *Script) Generate(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var reply message.Message
	if n < len(s.replies) {
		reply = s.replies[n]
	}
	s.mu.Unlock()
	if n >= len(s.replies) {
		return Response{}, fmt.Errorf("model: script has %d replies, asked for reply %d", len(s.replies), n+1)
	}
	return Answer(req, reply)
}

// Requests returns the requests the script was asked, in order.
func (s *Script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Answer returns reply as a deterministic model's answer to req: the reply streamed word by
// word to req.OnText when set, its usage counted in words, its stop reason from its tool
// calls. A Func model built on rules of its own answers with it.
func Answer(req Request, reply message.Message) (Response, error) {
	reply.Type = message.TypeAI
	text := reply.Text()
	if req.OnText != nil && text != "" {
		for _, w := range splitWords(text) {
			if err := req.OnText(w); err != nil {
				return Response{}, err
			}
		}
	}
	in := int64(0)
	for _, m := range req.Messages {
		in += int64(len(strings.Fields(m.Text())))
	}
	usage := message.Usage{InputTokens: in, OutputTokens: int64(len(strings.Fields(text)))}
	reply.Usage = &usage
	stop := StopEnd
	if len(reply.ToolCalls) > 0 {
		stop = StopToolCalls
	}
	return Response{Message: reply, Usage: usage, StopReason: stop, Model: "script"}, nil
}

// splitWords splits text into pieces that join back to it: each word with the space before it.
func splitWords(text string) []string {
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' && text[i-1] != ' ' {
			out = append(out, text[start:i])
			start = i
		}
	}
	return append(out, text[start:])
}
