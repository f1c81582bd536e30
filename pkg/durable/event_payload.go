package durable

import (
	"reflect"

	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

// EventPayload describes the payload type of a typed event handler (OnEvent), so that a
// client can be shown what the event expects.
type EventPayload struct {
	// Type is the payload type P of OnEvent.
	Type reflect.Type
	// Required lists, in field order, the JSON names of the fields a struct payload must carry
	// (`durable:"required"`); nil for other payload types.
	Required []string
}

// EventPayload implements graphrun.EventPayloadTyper.
func (r *registration[S]) EventPayload(event string) (EventPayload, bool) {
	if r == nil {
		return EventPayload{}, false
	}
	p, ok := r.eventPayloads[event]
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

var _ graphrun.EventPayloadTyper[EventPayload] = (*registration[struct{}])(nil)
