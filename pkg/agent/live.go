package agent

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// replySpace is the namespace of the IDs of model replies.
var replySpace = uuid.MustParse("0b8f0f36-7c55-4d8a-a4f9-6f1f7f0e2d11")

// replyID is the ID of the reply the step in ctx asks for: the same on every attempt of the
// step, so the live chunks of a retried turn and its committed message share it.
func replyID(ctx context.Context) string {
	info, ok := durable.StepInfoFrom(ctx)
	if !ok {
		return "run-" + uuid.NewString()
	}
	return "run-" + uuid.NewSHA1(replySpace, []byte(info.IdempotencyKey())).String()
}

// liveText returns the OnText of a turn: each piece of the reply to the run's live channel,
// as a message chunk of the reply's ID. A full channel stops the pieces, not the turn.
func liveText(ctx context.Context, id string) func(string) error {
	full := false
	return func(text string) error {
		if full {
			return nil
		}
		err := durable.Write(ctx, durable.MessagesChunk, durable.MessageChunk{Type: "AIMessageChunk", Content: text, ID: id})
		if errors.Is(err, durable.ErrStepStreamFull) || errors.Is(err, durable.ErrWriteTooLarge) {
			full = true
			return nil
		}
		return err
	}
}
