// Package openaitest is a fake of the OpenAI Chat Completions HTTP API on a loopback
// httptest server, for tests of code that calls a model through package model/openai (or
// any client of the API) without a network or a key.
//
// A Server answers POST …/chat/completions, on the OpenAI path (BaseURL, /v1/chat/completions)
// and on the Azure OpenAI path (/openai/deployments/{deployment}/chat/completions?api-version=…),
// with its scripted replies in order: a text, tool calls, a refusal, or an error body with its
// status (429, 500), or a stream that fails midway. It answers a request that asks to stream ("stream": true) with server-sent
// events, `data: {chunk}` … `data: [DONE]`, the text in pieces and each tool call's arguments
// split across chunks, and a usage chunk when stream_options.include_usage is set; on the
// Azure path the stream carries Azure's content-filter annotations too (chunks with an
// empty id and no delta, before and after the reply's), as a deployment with the
// asynchronous filter sends them. It records every request it got, decoded, so a test can
// assert that a model was requested exactly once.
//
// It is not a model and not a conformance test of the API: it checks only what it needs to
// route and answer a request (method, path, api-version, the key when Key is set).
package openaitest
