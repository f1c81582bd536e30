// Package model is what an agent asks a chat model: a reply to messages, given the tools the
// model may call, streamed as it is written when asked, with the tokens it cost.
//
// Model is the interface; its adapters live in their own packages so that an app compiles
// and downloads only the vendor SDK it uses: model/openai (OpenAI and Azure OpenAI, on
// github.com/openai/openai-go/v3) and model/anthropic (on
// github.com/anthropics/anthropic-sdk-go/v2). Script is a deterministic model for tests and
// for apps that run without a vendor.
//
// A model call is not durable by itself: package agent makes each call one durable step, so
// that a reply a step committed is never requested again.
package model
