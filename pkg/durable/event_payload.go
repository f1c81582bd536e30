package durable

import "reflect"

// EventPayload describes the payload type of a typed event handler (OnEvent), so that a
// client can be shown what the event expects.
type EventPayload struct {
	// Type is the payload type P of OnEvent.
	Type reflect.Type
	// Required lists, in field order, the JSON names of the fields a struct payload must carry
	// (`durable:"required"`); nil for other payload types.
	Required []string
}

// EventPayloadTyper is the optional capability of a Graph that describes the payload types of
// its typed event handlers. GraphRegistration implements it.
type EventPayloadTyper interface {
	// EventPayload returns the payload of event's typed handler, or false when the graph has
	// no handler for event or an untyped one (AddEventHandler: any JSON value).
	EventPayload(event string) (EventPayload, bool)
}

// EventPayload implements EventPayloadTyper.
func (g GraphRegistration[S]) EventPayload(event string) (EventPayload, bool) {
	if g.r == nil {
		return EventPayload{}, false
	}
	p, ok := g.r.eventPayloads[event]
	return p, ok
}

// recordEventPayload remembers the payload type of eventName's typed handler.
func (b *ManifestBuilder[S]) recordEventPayload(eventName string, typ reflect.Type) {
	p := EventPayload{Type: typ}
	if typ.Kind() == reflect.Struct {
		if schema, err := newStateSchema(typ); err == nil {
			for _, f := range schema.fields {
				if f.required {
					p.Required = append(p.Required, f.name)
				}
			}
		}
	}
	if b.eventPayloads == nil {
		b.eventPayloads = map[string]EventPayload{}
	}
	b.eventPayloads[eventName] = p
}

var _ EventPayloadTyper = GraphRegistration[struct{}]{}
