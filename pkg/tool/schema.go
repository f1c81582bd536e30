package tool

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// schemaOf returns the JSON Schema of a struct type as a tool's parameters: the object schema
// itself (no $schema, $id or $defs references), additional properties refused.
func schemaOf(typ reflect.Type) (json.RawMessage, error) {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(typ)
	s.Version, s.ID = "", ""
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("derive the input's schema: %w", err)
	}
	return b, nil
}
