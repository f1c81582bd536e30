package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// Tool is a function a model may call.
type Tool struct {
	def      model.ToolDef
	call     func(ctx context.Context, args json.RawMessage) (string, error)
	approval bool
	retry    durable.RetryPolicy
}

// Option configures a tool.
type Option func(*Tool)

// RequiresApproval marks the tool as one whose calls wait for a person's approval before they
// run (package agent).
func RequiresApproval() Option { return func(t *Tool) { t.approval = true } }

// WithRetry retries a failed call under p before its error goes back to the model; without
// it a failed call is not retried. An error marked durable.NonRetryable is never retried.
func WithRetry(p durable.RetryPolicy) Option { return func(t *Tool) { t.retry = p } }

// namePattern is what vendors accept as a tool name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ErrInvalidArguments is wrapped by Call's error when the arguments do not decode into the
// tool's input: the model sent a call that does not fit the schema. It is not retried.
var ErrInvalidArguments = errors.New("invalid arguments")

// New returns the tool name, described to the model by description, that calls fn with the
// call's arguments decoded into In (a struct; its JSON Schema is derived from its type). fn's
// result goes back to the model: a string as it is, anything else as JSON. Errors: a name
// vendors refuse (letters, digits, _ and -, at most 64), an empty description, an In that is
// not a struct, or a schema that cannot be derived from it.
func New[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...Option) (*Tool, error) {
	if !namePattern.MatchString(name) {
		return nil, fmt.Errorf("tool %q: a name is 1 to 64 letters, digits, _ or -", name)
	}
	if description == "" {
		return nil, fmt.Errorf("tool %s: description required: it is how the model knows when to call it", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %s: function required", name)
	}
	typ := reflect.TypeFor[In]()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool %s: input must be a struct, got %s", name, typ)
	}
	schema, err := schemaOf(typ)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	t := &Tool{def: model.ToolDef{Name: name, Description: description, Parameters: schema}}
	t.call = func(ctx context.Context, args json.RawMessage) (string, error) {
		var in In
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return "", durable.NonRetryable(fmt.Errorf("%w: %v", ErrInvalidArguments, err))
		}
		out, err := fn(ctx, in)
		if err != nil {
			return "", err
		}
		if s, ok := any(out).(string); ok {
			return s, nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return "", durable.NonRetryable(fmt.Errorf("encode result: %w", err))
		}
		return string(b), nil
	}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// Must returns t, or panics with err: for tools declared at package level.
func Must(t *Tool, err error) *Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name.
func (t *Tool) Name() string { return t.def.Name }

// Def returns the tool as a model sees it.
func (t *Tool) Def() model.ToolDef { return t.def }

// NeedsApproval reports whether the tool's calls wait for approval (RequiresApproval).
func (t *Tool) NeedsApproval() bool { return t.approval }

// RetryPolicy returns the tool's retry policy (WithRetry); the zero policy retries nothing.
func (t *Tool) RetryPolicy() durable.RetryPolicy { return t.retry }

// Call runs the tool with a call's arguments (a JSON object) and returns its result as the
// text of the tool message. The context carries the call (CallFrom), whose ID is the key to
// deduplicate the tool's side effects with. Errors: the function's, or one wrapping
// ErrInvalidArguments (marked durable.NonRetryable).
func (t *Tool) Call(ctx context.Context, call message.ToolCall) (string, error) {
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return t.call(withCall(ctx, call), args)
}

type callKey struct{}

func withCall(ctx context.Context, call message.ToolCall) context.Context {
	return context.WithValue(ctx, callKey{}, call)
}

// CallFrom returns the tool call a tool runs for, from the context Call passes it.
func CallFrom(ctx context.Context) (message.ToolCall, bool) {
	c, ok := ctx.Value(callKey{}).(message.ToolCall)
	return c, ok
}

// IdempotencyKey returns the ID of the tool call a tool runs for: the same on every attempt
// of the call, distinct for every call the model makes. Empty outside a call.
func IdempotencyKey(ctx context.Context) string {
	c, _ := CallFrom(ctx)
	return c.ID
}
