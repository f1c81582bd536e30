// Package anthropictest is a loopback fake of Anthropic's Messages API for tests: an
// httptest server answering POST /v1/messages with scripted replies, in order, as JSON or
// as a server-sent event stream when the request asks for one, and recording every request
// it was sent, decoded, so that a test can assert what an adapter asked and how many times.
//
// It speaks the wire format the official SDK reads (github.com/anthropics/anthropic-sdk-go/v2):
// messages with text, thinking and tool_use blocks; usage with cache_read_input_tokens and
// cache_creation_input_tokens; the stream's message_start, ping, content_block_start,
// content_block_delta (text_delta, input_json_delta, thinking_delta, signature_delta; a
// block's text and input split across events), content_block_stop, message_delta (stop
// reason, usage) and message_stop; error replies in Anthropic's {"type": "error", "error":
// {...}} shape, before a stream or inside it. It rejects, as Anthropic does, a request
// without the key (x-api-key, or Authorization: Bearer) or without anthropic-version, and a
// request that breaks the rules an adapter must follow: max_tokens missing, no messages,
// empty text blocks, a tool_use left without its tool_result in the next user turn,
// tool_result blocks after other content, and, on API version 2026-10-21, sampling
// parameters (temperature, top_p, top_k).
//
// It is for tests, not production: it never calls Anthropic and its replies are only what
// the test scripted.
package anthropictest
