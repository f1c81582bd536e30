// Package message is the chat message of an agent: LangChain's wire shape, so that LangGraph
// clients read a graph's messages as they read LangGraph's, and a messages state field with
// LangGraph's add_messages semantics.
//
// A Message is one of four kinds (Type): a human's message, an assistant's (AI) reply with
// the tool calls it asks for, a system prompt, and a tool's result answering one tool call;
// a Remove marker deletes a message when Add merges it. It encodes as langchain-core 1.x's
// model_dump of the same message in a graph's state ({"content": …, "additional_kwargs": {},
// "response_metadata": {}, "type": "ai", "name": null, "id": …, "tool_calls": [{"name",
// "args", "id", "type": "tool_call"}], "invalid_tool_calls": [], "usage_metadata": …}), the
// shape the LangGraph JS SDK's Message type describes. It decodes every shape add_messages
// coerces (Message.UnmarshalJSON): that dict, OpenAI's {"role": …} dicts (with "function"
// tool calls whose arguments are a JSON string), LangChain's serialized constructor form, a
// bare string (a human message) and a [role, content] pair.
//
// Add merges messages into a list as add_messages does: a message whose ID is in the list
// replaces it, a Remove marker deletes it, any other message is appended; a message without
// an ID gets one derived from it, not a random one, so that durable replays agree. AddMessages
// is the same as a durable.Reducer for a field that branches of a fan-out extend.
//
// Not modelled: LangChain's legacy FunctionMessage and ChatMessage (decoding says so), and
// add_messages' format="langchain-openai" option. The package holds data and its rules only:
// it calls no model (package model does) and runs no tool (package tool).
package message
