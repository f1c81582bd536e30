// Package openai is a model.Model on the OpenAI Chat Completions API, for OpenAI (New) and
// for a deployment on Azure OpenAI (NewAzure, with a key or an Entra ID credential), built on
// the official SDK, github.com/openai/openai-go/v3.
//
// It maps a model.Request both ways: system, human (text, images), AI (text and tool calls)
// and tool messages; function tools with their JSON Schema; tool_choice; structured output
// (response_format json_schema, strict); max tokens (max_completion_tokens) and temperature.
// With Request.OnText set it streams, handing OnText each piece of text, and assembles the
// tool-call argument deltas, so that the reply returned is the one a call without streaming
// would return; a stream that ends before the reply's finish reason is an error
// (io.ErrUnexpectedEOF), not a shorter reply, and Azure's content-filter annotations in a
// stream are skipped. Usage counts cached prompt tokens (prompt_tokens_details.cached_tokens).
// A tool call whose arguments are not a JSON object (cut at the reply's length, say) is kept
// in the reply's InvalidToolCalls, as LangChain keeps it, rather than failing the call. An AI
// message another vendor wrote is sent as its text and tool calls (its thinking parts left
// out). A refusal, or a reply or prompt stopped by the content filter, is model.ErrRefused;
// the vendor's errors are wrapped so that errors.As finds the SDK's *openai.Error (or, for an
// error event in the middle of a stream, its *ssestream.StreamError).
//
// The SDK's retries are off by default (Config.MaxRetries): an agent's model call is a
// durable step, which owns retry, and a call retried after the vendor answered is paid for
// twice.
//
// Only an app that imports this package downloads and compiles the SDK; package model does
// not depend on it. Package openaitest is a fake of the API for tests.
//
// It is not a client of the Responses or Assistants APIs, and reads no environment
// variable: the caller passes keys and endpoints in its Config.
package openai
