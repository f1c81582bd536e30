package examples

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// ReplyState is the state model of the reply_writer graph.
type ReplyState struct {
	// Prompt is what to reply to; required, not blank, at most MaxPromptBytes.
	Prompt string `json:"prompt" durable:"required"`
	// PauseMS is the pause between two pieces of the reply, in milliseconds, as a model's
	// tokens come: 0 to MaxPauseMS.
	PauseMS int `json:"pause_ms"`
	// Reply is the whole reply, once written.
	Reply string `json:"reply"`
}

// Bounds of reply_writer's input.
const (
	// MaxPromptBytes bounds the prompt: 4 KiB.
	MaxPromptBytes = 4 << 10
	// MaxPauseMS bounds the pause between two pieces: the reply takes at most about 20
	// seconds.
	MaxPauseMS = 1000
)

// Validate checks the prompt and the pause.
func (s *ReplyState) Validate() error {
	switch {
	case strings.TrimSpace(s.Prompt) == "":
		return errors.New("prompt must not be blank")
	case len(s.Prompt) > MaxPromptBytes:
		return fmt.Errorf("prompt must be at most %d bytes, got %d", MaxPromptBytes, len(s.Prompt))
	case s.PauseMS < 0 || s.PauseMS > MaxPauseMS:
		return fmt.Errorf("pause_ms must be 0 to %d, got %d", MaxPauseMS, s.PauseMS)
	}
	return nil
}

// ReplyWriter builds the reply_writer graph, the example of a step that streams while it
// runs: its one node, compose, writes its reply piece by piece (durable.WriteMessageChunk,
// a word at a time, PauseMS apart, as a model's tokens come), a progress chunk every five
// pieces (durable.Write), and emits "composed" (durable.Emit) before it commits the whole
// reply. Whoever watches the run sees the pieces at once: the runs API's feed (event: live),
// the platform's messages-tuple and custom stream modes. The reply is made up (no model):
// it quotes an excerpt of the prompt.
func ReplyWriter() (durable.GraphRegistration[ReplyState], error) {
	b := durable.NewManifestBuilder[ReplyState]("reply_writer",
		durable.WithMetadata(map[string]any{"example": true, "profile": "streaming"}))
	b.SetEntrypoint("compose")
	_ = b.AddStep("compose", compose, durable.Terminal())
	return b.Build()
}

// MustReplyWriter is ReplyWriter for package initialisation; it panics on error.
func MustReplyWriter() durable.GraphRegistration[ReplyState] {
	return must(ReplyWriter())
}

// progressEvery is how many pieces compose writes between two progress chunks.
const progressEvery = 5

// compose writes the reply a word at a time. A retried attempt writes it again from the start:
// its earlier pieces are retracted in the live channel.
func compose(ctx context.Context, s ReplyState) (ReplyState, error) {
	words := strings.Fields(fmt.Sprintf("You wrote %q. This reply is written piece by piece, as a model writes its tokens, and committed whole.",
		excerpt(s.Prompt, maxQuoteBytes)))
	pause := time.Duration(s.PauseMS) * time.Millisecond
	var reply strings.Builder
	for i, w := range words {
		if i > 0 {
			w = " " + w
			if err := sleep(ctx, pause); err != nil {
				return s, err
			}
		}
		if err := durable.WriteMessageChunk(ctx, w); err != nil {
			return s, err
		}
		reply.WriteString(w)
		if (i+1)%progressEvery == 0 || i+1 == len(words) {
			if err := durable.Write(ctx, "progress", map[string]int{"pieces": i + 1, "of": len(words)}); err != nil {
				return s, err
			}
		}
	}
	if err := durable.Emit(ctx, "composed", map[string]int{"pieces": len(words)}); err != nil {
		return s, err
	}
	s.Reply = reply.String()
	return s, nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
