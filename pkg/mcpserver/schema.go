package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// inputSchema returns the JSON Schema of a start's input for a graph whose state is typ (nil:
// any object). It is the runs API's schema of the state (openapi.SchemaOf) in JSON Schema
// terms: a nullable member's type is [type, "null"], and the required members are the
// fields the state model requires (`durable:"required"`), not every field without
// omitempty: a start names the fields it sets and the others keep their zero values.
func inputSchema(typ reflect.Type) map[string]any {
	if typ == nil {
		return map[string]any{"type": "object"}
	}
	out := jsonSchema(openapi.SchemaOf(typ))
	delete(out, "required")
	if req := requiredFields(typ); len(req) > 0 {
		out["required"] = req
	}
	return out
}

// jsonSchema converts an OpenAPI 3.0 schema to a JSON Schema (2020-12) object. Nested
// objects keep no required list: a nested member a start omits decodes as its zero value.
func jsonSchema(s *openapi.Schema) map[string]any {
	var m map[string]any
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &m)
	return convert(m)
}

func convert(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	if m["nullable"] == true {
		delete(m, "nullable")
		if t, ok := m["type"].(string); ok {
			m["type"] = []any{t, "null"}
		}
	}
	delete(m, "required")
	if props, ok := m["properties"].(map[string]any); ok {
		for k, v := range props {
			if pm, ok := v.(map[string]any); ok {
				props[k] = convert(pm)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := m[k].(map[string]any); ok {
			m[k] = convert(sub)
		}
	}
	return m
}

// requiredFields returns the JSON names of the fields of struct typ tagged
// `durable:"required"`, in declaration order.
func requiredFields(typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for f := range typ.Fields() {
		if !f.IsExported() || !hasOption(f.Tag.Get("durable"), "required") {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// hasOption reports whether the comma-separated tag holds opt.
func hasOption(tag, opt string) bool {
	for part := range strings.SplitSeq(tag, ",") {
		if strings.TrimSpace(part) == opt {
			return true
		}
	}
	return false
}
