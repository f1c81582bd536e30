package durable

import "context"

// MessagesChunk is the name of the chunks (Write) that carry pieces of a chat message while a
// step produces it, a model's reply token by token. The platform routes serve them in
// LangGraph's messages stream modes, each as a message chunk with its metadata; every other
// chunk is served in the custom mode (docs/http-platform.md, "Durable assistants").
const MessagesChunk = "messages"

// MessageChunk is a piece of a chat message as LangGraph serializes a message chunk. Write
// one named MessagesChunk to give it an ID of your own (the one the message has in the
// state, so that a client puts the pieces and the final message together); WriteMessageChunk
// writes one without.
type MessageChunk struct {
	// Type is the message type: "AIMessageChunk" for an assistant's reply.
	Type string `json:"type"`
	// Content is the piece of text.
	Content string `json:"content"`
	// ID names the message the pieces belong to; empty, the platform names it after the step
	// attempt that wrote it, so a retried step's reply is a message of its own.
	ID string `json:"id,omitempty"`
}

// WriteMessageChunk writes content, the next piece of the assistant message the step is
// producing (a model's tokens as they come), to the run's live channel: Write of a
// MessageChunk of type "AIMessageChunk" named MessagesChunk. Its errors are Write's.
func WriteMessageChunk(ctx context.Context, content string) error {
	return Write(ctx, MessagesChunk, MessageChunk{Type: "AIMessageChunk", Content: content})
}
