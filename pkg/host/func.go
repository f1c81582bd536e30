package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Func adapts a typed function to an InvocableGraph: the request's input object is decoded into
// In with encoding/json, and the returned Out is the output (a struct or map is answered as
// `{"output": <object>}`). A graph needs no type of its own and no raw JSON:
//
//	type Question struct{ Text string `json:"text"` }
//	type Answer struct{ Reply string `json:"reply"` }
//	app.Register(host.Func[Question, Answer](func(ctx context.Context, q Question) (Answer, error) {
//		return Answer{Reply: "you asked: " + q.Text}, nil
//	}), "ask", host.RegisterOptions{})
//
// An input that does not decode into In is answered 422 `Validation error: input.<field>:
// <what was expected>` (an InputError) and the function is not called. Unknown input keys are
// ignored. Return a *ClientError (any 4xx with a public message) or an *InputError to refuse
// the input from inside the function; any other error is a 500 "Graph execution failed".
// Use RequestFrom(ctx) for the thread id or config.
type Func[In, Out any] func(ctx context.Context, in In) (Out, error)

// Invoke decodes the input and calls f.
func (f Func[In, Out]) Invoke(ctx context.Context, req Request) (any, error) {
	var in In
	if err := decodeInput(req.Input, &in); err != nil {
		return nil, err
	}
	return f(WithRequest(ctx, req), in)
}

type requestKey struct{}

// WithRequest returns a context carrying req, as Func passes it to its function.
func WithRequest(ctx context.Context, req Request) context.Context {
	return context.WithValue(ctx, requestKey{}, req)
}

// RequestFrom returns the Request of the run a Func runs in (thread id, config, version).
func RequestFrom(ctx context.Context) (Request, bool) {
	req, ok := ctx.Value(requestKey{}).(Request)
	return req, ok
}

// decodeInput decodes the input object into ptr; a type mismatch is an InputError naming the
// field and the JSON kind expected, never Go type names.
func decodeInput(raw json.RawMessage, ptr any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	err := json.Unmarshal(raw, ptr)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := "input"
		if te.Field != "" {
			field += "." + te.Field
		}
		return &InputError{Field: field, Message: fmt.Sprintf("Input should be a valid %s, got %s", jsonKind(te.Type), te.Value)}
	}
	return &InputError{Field: "input", Message: "Input could not be decoded"}
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "value"
}
