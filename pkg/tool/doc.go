// Package tool turns typed Go functions into tools a model may call.
//
// New takes a function of a context and an input struct; the JSON Schema the model sees is
// derived from the input type by github.com/invopop/jsonschema (field names from json tags,
// descriptions from jsonschema tags, required fields from omitempty's absence), and a call's
// arguments are decoded strictly into it. A tool's result goes back to the model as a tool
// message: a string as it is, anything else as JSON. A tool's error goes back as a tool
// message of status error, once the tool's retry policy has had its say: package agent runs
// each tool call as a durable step, retried under that policy, and only the last failure
// reaches the model.
//
// A tool marked RequiresApproval pauses the agent on the calls the model made to it until a
// person approves, edits or rejects each (package agent).
package tool
