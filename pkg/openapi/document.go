package openapi

import (
	"encoding/json"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
)

// Document is an OpenAPI 3.0.3 document: info, paths, component schemas and security schemes,
// each written in the order it was added. The zero value is an empty document.
type Document struct {
	// Title and Version are info.title and info.version.
	Title, Version string

	paths           []pathItem
	schemas         Object
	securitySchemes Object
}

type pathItem struct {
	path string
	ops  Object // method → Operation
}

// Operation is one operation of a path. Empty members are left out, except Security: nil
// leaves it out, empty writes [] (no auth).
type Operation struct {
	OperationID string      `json:"operationId,omitempty"`
	Summary     string      `json:"summary,omitempty"`
	Description string      `json:"description,omitempty"`
	Tags        []string    `json:"tags,omitempty"`
	Parameters  []Parameter `json:"parameters,omitempty"`
	RequestBody any         `json:"requestBody,omitempty"`
	Responses   any         `json:"responses,omitempty"`
	// Security lists the accepted schemes.
	Security []map[string][]string `json:"security,omitzero"`
}

// Parameter is a parameter object.
type Parameter struct {
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Required bool    `json:"required"`
	Schema   *Schema `json:"schema"`
}

// PathParameter is a required string parameter of the path.
func PathParameter(name string) Parameter {
	return Parameter{Name: name, In: "path", Required: true, Schema: &Schema{Type: "string"}}
}

// AddPath adds an operation for method (lower-cased) on path, after those already there.
func (d *Document) AddPath(path, method string, op Operation) {
	method = strings.ToLower(method)
	for i := range d.paths {
		if d.paths[i].path == path {
			d.paths[i].ops = append(d.paths[i].ops, Member{method, op})
			return
		}
	}
	d.paths = append(d.paths, pathItem{path: path, ops: Object{{method, op}}})
}

// AddSchema adds (or replaces, in place) a component schema; schema is a *Schema or any
// JSON-encodable value.
func (d *Document) AddSchema(name string, schema any) { d.schemas = d.schemas.with(name, schema) }

// AddSecurityScheme adds (or replaces, in place) a component security scheme. A document
// without one leaves components.securitySchemes out.
func (d *Document) AddSecurityScheme(name string, scheme any) {
	d.securitySchemes = d.securitySchemes.with(name, scheme)
}

// MarshalJSON writes the document: openapi, info, paths, components.
func (d *Document) MarshalJSON() ([]byte, error) {
	paths := make(Object, 0, len(d.paths))
	for _, p := range d.paths {
		paths = append(paths, Member{p.path, p.ops})
	}
	components := Object{{"schemas", d.schemas}}
	if len(d.securitySchemes) > 0 {
		components = append(components, Member{"securitySchemes", d.securitySchemes})
	}
	return Object{
		{"openapi", "3.0.3"},
		{"info", Object{{"title", d.Title}, {"version", d.Version}}},
		{"paths", paths},
		{"components", components},
	}.MarshalJSON()
}

// Member is one key and value of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object that keeps its members' order: a hand-written schema, request body
// or responses object.
type Object []Member

// MarshalJSON writes the members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(m.Key)
		b = append(append(b, k...), ':')
		var err error
		if b, err = jsonenc.Append(b, m.Value); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// with returns o with key set to value: replaced in place, or added last.
func (o Object) with(key string, value any) Object {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = value
			return o
		}
	}
	return append(o, Member{key, value})
}
