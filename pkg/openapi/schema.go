package openapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// Schema is an OpenAPI 3.0 schema object, generated from Go types by SchemaOf or written by
// hand. Members are written in field order; Properties keep their order.
type Schema struct {
	Ref                  string     `json:"$ref,omitempty"`
	Type                 string     `json:"type,omitempty"`
	Format               string     `json:"format,omitempty"`
	Description          string     `json:"description,omitempty"`
	Nullable             bool       `json:"nullable,omitempty"`
	Properties           Properties `json:"properties,omitempty"`
	Required             []string   `json:"required,omitempty"`
	Items                *Schema    `json:"items,omitempty"`
	AdditionalProperties *Schema    `json:"additionalProperties,omitempty"`
}

// Property is one named member of Schema.Properties.
type Property struct {
	Name   string
	Schema *Schema
}

// Properties is an ordered list of properties, written as a JSON object.
type Properties []Property

// MarshalJSON writes the properties as an object in order.
func (p Properties) MarshalJSON() ([]byte, error) {
	obj := make(Object, 0, len(p))
	for _, x := range p {
		obj = append(obj, Member{x.Name, x.Schema})
	}
	return obj.MarshalJSON()
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	rawJSONType = reflect.TypeFor[json.RawMessage]()
)

// SchemaOf returns the JSON Schema of a Go type as encoding/json writes it: structs are objects
// with their exported fields under json tag names (embedded structs flattened, `-` skipped;
// fields without omitempty are required), pointers are nullable, slices and arrays are arrays
// ([]byte a base64 string), maps are objects with additionalProperties, time.Time a date-time
// string, and interfaces and json.RawMessage any value. A recursive type is cut at the
// repetition with an empty (any) schema. A nil type gives the empty schema.
func SchemaOf(t reflect.Type) *Schema {
	return schemaOf(t, map[reflect.Type]bool{})
}

func schemaOf(t reflect.Type, visiting map[reflect.Type]bool) *Schema {
	if t == nil {
		return &Schema{}
	}
	switch t {
	case timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case rawJSONType:
		return &Schema{}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Format: "int64"}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &Schema{Type: "integer", Format: "int32"}
	case reflect.Float32:
		return &Schema{Type: "number", Format: "float"}
	case reflect.Float64:
		return &Schema{Type: "number", Format: "double"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Pointer:
		s := *schemaOf(t.Elem(), visiting)
		s.Nullable = true
		return &s
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string", Format: "byte"}
		}
		return &Schema{Type: "array", Items: schemaOf(t.Elem(), visiting)}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: schemaOf(t.Elem(), visiting)}
	case reflect.Struct:
		if visiting[t] {
			return &Schema{}
		}
		visiting[t] = true
		defer delete(visiting, t)
		s := &Schema{Type: "object"}
		addFields(s, t, visiting)
		return s
	}
	return &Schema{} // interfaces and anything else: any value
}

// addFields adds t's exported fields to s, flattening untagged embedded structs.
func addFields(s *Schema, t reflect.Type, visiting map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, visiting)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.Properties = append(s.Properties, Property{Name: name, Schema: schemaOf(ft, visiting)})
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
}

// Ref returns a reference to the component schema name.
func Ref(name string) *Schema { return &Schema{Ref: "#/components/schemas/" + name} }
