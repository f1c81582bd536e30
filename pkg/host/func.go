package host

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
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
	return f.invokeRequest(ctx, &req)
}

// invokeRequest is Invoke for a request the caller never changes again: the run's context
// carries req itself, not a copy (see requestInvoker).
func (f Func[In, Out]) invokeRequest(ctx context.Context, req *Request) (any, error) {
	c := &funcCall[In]{ctx: requestContext{Context: ctx, req: req}}
	if err := decodeInput(req.Input, &c.in); err != nil {
		return nil, err
	}
	return f(&c.ctx, c.in)
}

// funcCall is what a call of a Func needs, in one allocation: the input it is decoded into,
// and the context carrying the request (withRequest's).
type funcCall[In any] struct {
	ctx requestContext
	in  In
}

// requestContext is context.WithValue(ctx, requestKey{}, req) as a field of funcCall.
type requestContext struct {
	context.Context
	req *Request
}

// Value returns the request for requestKey{}, and the parent's value for any other key.
func (c *requestContext) Value(key any) any {
	if key == (requestKey{}) {
		return c.req
	}
	return c.Context.Value(key)
}

// requestInvoker is a graph that takes its Request by pointer (Func): the invoke route, whose
// request is never changed once admitted, calls it instead of Invoke to spare a copy.
type requestInvoker interface {
	invokeRequest(ctx context.Context, req *Request) (any, error)
}

type requestKey struct{}

// withRequest returns a context carrying req, as Func passes it to its function.
func withRequest(ctx context.Context, req Request) context.Context {
	return context.WithValue(ctx, requestKey{}, &req)
}

// RequestFrom returns the Request of the run a Func runs in (thread id, config, version).
func RequestFrom(ctx context.Context) (Request, bool) {
	req, ok := ctx.Value(requestKey{}).(*Request)
	if !ok {
		return Request{}, false
	}
	return *req, true
}

// decodeInput decodes the input object into ptr; a type mismatch is an InputError naming the
// field and the JSON kind expected, never Go type names. An In of plain data (plainInput) is
// decoded by json v2 with encoding/json's options first; when that fails, or for any other
// In, encoding/json decodes it (into a zero In), and its error names the field.
func decodeInput[In any](raw json.RawMessage, ptr *In) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if plainInput(reflect.TypeFor[In]()) {
		if jsonv2.Unmarshal(raw, ptr, inputOptions) == nil {
			return nil
		}
		var zero In
		*ptr = zero
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

// inputOptions are encoding/json's rules in json v2 (what encoding/json itself runs on under
// GOEXPERIMENT=jsonv2): for plain data the same values, without v1's scanner and reflection
// walk, in a fifth of its allocations.
var inputOptions = jsonv1.DefaultOptionsV1()

// plainTypes caches plainInput's answer per type.
var plainTypes sync.Map // reflect.Type → bool

// plainInput reports whether json v2 with inputOptions decodes t exactly as encoding/json
// does (FuzzDecodeInput compares them): t is built of booleans, numbers, strings, pointers,
// slices, arrays, maps with string keys, empty interfaces and structs of those, with no
// decoding methods of its own (json.RawMessage excepted) and no json.Number, which
// encoding/json alone treats as a number.
func plainInput(t reflect.Type) bool {
	if v, ok := plainTypes.Load(t); ok {
		return v.(bool)
	}
	ok := plainType(t, map[reflect.Type]bool{})
	plainTypes.Store(t, ok)
	return ok
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func plainType(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == rawMessageType {
		return true
	}
	if seen[t] {
		return true // a recursive type: decided where it started
	}
	seen[t] = true
	if t == numberType || t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType) ||
		reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return plainType(t.Elem(), seen)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && plainType(t.Key(), seen) && plainType(t.Elem(), seen)
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && !plainType(f.Type, seen) {
				return false
			}
		}
		return true
	}
	return false
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
