// Package message is the chat message of an agent: LangChain's wire shape, so that LangGraph
// clients read a graph's messages as they read LangGraph's, and a messages state field with
// LangGraph's add_messages semantics.
//
// A Message is one of four kinds (Type): a human's message, an assistant's (AI) reply with
// the tool calls it asks for, a system prompt, and a tool's result answering one tool call.
// It encodes as LangChain serializes a message in a graph's state ({"type": "ai",
// "content": …, "tool_calls": [{"name", "args", "id", "type": "tool_call"}], …}) and decodes
// that shape, OpenAI's {"role": …} dicts (with "function" tool calls whose arguments are a
// JSON string), a bare string (a human message) and a [role, content] pair, as LangGraph
// accepts them on input.
//
// Add merges messages into a list as add_messages does: a message whose ID is in the list
// replaces it, a Remove marker deletes it, any other message is appended. AddMessages is the
// same as a durable.Reducer for a field that branches of a fan-out extend.
//
// The package holds data and its rules only: it calls no model (package model does) and runs
// no tool (package tool).
package message
