package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// ErrInvalidEventPayload marks an event payload that does not decode into the payload type of
// its typed event handler (OnEvent): a value of the wrong type or a missing required field.
var ErrInvalidEventPayload = errors.New("durable: invalid event payload")

// EventPayloadError is an event payload refused by the payload type of its OnEvent handler.
// Unknown object keys are never a reason: clients are forgiven unknown fields.
type EventPayloadError struct {
	// Event is the event name.
	Event string
	// Field is the JSON name of the offending top-level field, or empty for the whole payload.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error returns "invalid payload of event '<event>': [field '<f>': ]<reason>".
func (e *EventPayloadError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("invalid payload of event '%s': field '%s': %s", e.Event, e.Field, e.Reason)
	}
	return fmt.Sprintf("invalid payload of event '%s': %s", e.Event, e.Reason)
}

// Unwrap returns ErrInvalidEventPayload.
func (e *EventPayloadError) Unwrap() error { return ErrInvalidEventPayload }

// CheckEvent implements graphrun.EventChecker.
func (r *registration[S]) CheckEvent(event string, payload json.RawMessage) error {
	if r == nil {
		return errNotBuilt
	}
	if _, ok := r.eventHandlers[event]; !ok {
		return newError(ErrUnknownEvent, fmt.Sprintf("unknown event handler '%s'", event))
	}
	if check := r.eventChecks[event]; check != nil {
		return check(payload)
	}
	return nil
}

// payloadDecoder returns the function that decodes an event body into a *P: struct payloads
// go through the state model rules (unknown keys dropped, `durable:"required"` fields checked,
// lax integers, Validate), other types through encoding/json. null leaves P at its zero value.
func payloadDecoder[P any](event string) func(payload json.RawMessage, p *P) error {
	typ := reflect.TypeFor[P]()
	var schema *stateSchema
	if typ.Kind() == reflect.Struct {
		schema, _ = newStateSchema(typ) // a type the state rules refuse decodes as plain JSON
	}
	return func(payload json.RawMessage, p *P) error {
		if len(payload) == 0 || string(payload) == "null" {
			return nil
		}
		if schema == nil {
			if err := json.Unmarshal(payload, p); err != nil {
				return &EventPayloadError{Event: event, Reason: err.Error()}
			}
			return nil
		}
		if err := schema.decode(payload, p); err != nil {
			var se *StateError
			if errors.As(err, &se) {
				reason := se.Reason
				if se.Field == "" && reason == "state must be a JSON object" {
					reason = "payload must be a JSON object"
				}
				return &EventPayloadError{Event: event, Field: se.Field, Reason: reason}
			}
			return &EventPayloadError{Event: event, Reason: err.Error()}
		}
		return nil
	}
}

var _ graphrun.EventChecker = (*registration[struct{}])(nil)
