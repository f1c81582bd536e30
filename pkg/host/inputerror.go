package host

import "fmt"

// InputError is what a graph returns (from Invoke, or from Stream before it emits anything)
// when the input passes the host's checks but not the graph's own: the caller gets 422 with
// `Validation error: <Field>: <Message>`, like the host's request-model errors, instead of 500
// "Graph execution failed". Message must be safe to show a caller.
type InputError struct {
	// Field names the offending input, e.g. "input.messages".
	Field string
	// Message says what is wrong, e.g. "Input should be a valid list".
	Message string
}

func (e *InputError) Error() string { return fmt.Sprintf("invalid input: %s: %s", e.Field, e.Message) }
