// Package anthropic is a model.Model on Anthropic's Messages API, through the official SDK
// (github.com/anthropics/anthropic-sdk-go/v2, API version 2026-10-21).
//
// A request maps to one POST /v1/messages: system messages to the system parameter; human
// messages to user turns (text, and images given as image_url or image parts); AI messages
// to assistant turns of text, the thinking blocks an earlier reply carried and a tool_use
// block per tool call; tool messages to tool_result blocks (is_error for
// message.StatusError), the results of consecutive tool messages in one user turn, as
// Anthropic requires. Tools are custom tools whose input_schema is their parameters;
// ToolChoice "auto", "required", "none" or a tool's name map to Anthropic's auto, any, none
// and tool. Structured output (model.Request.Output) is Anthropic's own:
// output_config.format with the JSON schema, the reply's text the JSON value. MaxTokens is
// required by Anthropic: a request without one is sent Config.MaxTokens (DefaultMaxTokens).
// Temperature is not sent: API version 2026-10-21 rejects sampling parameters.
//
// With model.Request.OnText set, the reply is streamed (server-sent events): each text
// delta goes to OnText as it arrives, tool inputs are assembled from their input_json_delta
// pieces, and the reply returned is the message the events add up to, the same as the
// unstreamed one. Usage: the input tokens are Anthropic's input_tokens plus the tokens read
// from and written to the prompt cache, CachedInputTokens those read. Stop reasons: end_turn
// (and stop_sequence) is model.StopEnd, tool_use model.StopToolCalls, max_tokens
// model.StopLength, refusal the error model.ErrRefused. Anthropic's errors come back
// wrapped: errors.As finds the SDK's *anthropic.Error with its status and type.
//
// The SDK does not retry (Config.MaxRetries 0): a model call is one durable step, whose
// retry is the engine's, and a call retried inside a step is paid twice. Nor does it read
// the environment: the app passes the key and the endpoint in Config.
//
// Package anthropictest is a fake of the Messages API on loopback, for tests.
package anthropic
