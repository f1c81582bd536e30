package host

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// OpenAPIDocument is the OpenAPI 3.0 document served at GET /api/openapi.json. It is built at
// every request from the function app's routes (their funchost.RouteDoc) and then handed to
// the functions added with AddOpenAPI, which may add paths and component schemas.
type OpenAPIDocument struct {
	// Title and Version are info.title and info.version.
	Title, Version string
	paths          []openAPIPath
	schemas        []member
}

type openAPIPath struct {
	path string
	ops  []member // method → operation
}

// OpenAPIOperation is one operation of a path.
type OpenAPIOperation struct {
	OperationID string             `json:"operationId,omitempty"`
	Summary     string             `json:"summary,omitempty"`
	Description string             `json:"description,omitempty"`
	Tags        []string           `json:"tags,omitempty"`
	Parameters  []OpenAPIParameter `json:"parameters,omitempty"`
	RequestBody any                `json:"requestBody,omitempty"`
	Responses   any                `json:"responses,omitempty"`
	// Security lists the accepted schemes; empty (or nil) writes [] (no auth).
	Security []map[string][]string `json:"security"`
}

// OpenAPIParameter is a parameter object.
type OpenAPIParameter struct {
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Required bool    `json:"required"`
	Schema   *Schema `json:"schema"`
}

// AddPath adds an operation for method (lower-cased) on path, after those already there.
func (d *OpenAPIDocument) AddPath(path, method string, op OpenAPIOperation) {
	method = strings.ToLower(method)
	if op.Security == nil {
		op.Security = []map[string][]string{}
	}
	for i := range d.paths {
		if d.paths[i].path == path {
			d.paths[i].ops = append(d.paths[i].ops, member{method, op})
			return
		}
	}
	d.paths = append(d.paths, openAPIPath{path: path, ops: []member{{method, op}}})
}

// AddSchema adds (or replaces) a component schema; schema is any JSON-encodable value.
func (d *OpenAPIDocument) AddSchema(name string, schema any) {
	for i := range d.schemas {
		if d.schemas[i].key == name {
			d.schemas[i].value = schema
			return
		}
	}
	d.schemas = append(d.schemas, member{name, schema})
}

// MarshalJSON writes the document with its members in the usual order.
func (d *OpenAPIDocument) MarshalJSON() ([]byte, error) {
	paths := make(orderedObject, 0, len(d.paths))
	for _, p := range d.paths {
		paths = append(paths, member{p.path, orderedObject(p.ops)})
	}
	doc := orderedObject{
		{"openapi", "3.0.3"},
		{"info", orderedObject{{"title", d.Title}, {"version", d.Version}}},
		{"paths", paths},
		{"components", orderedObject{
			{"schemas", orderedObject(d.schemas)},
			{"securitySchemes", orderedObject{
				{"functionKey", orderedObject{{"type", "apiKey"}, {"in", "header"}, {"name", "x-functions-key"}}},
				{"functionCode", orderedObject{{"type", "apiKey"}, {"in", "query"}, {"name", "code"}}},
			}},
		}},
	}
	return doc.MarshalJSON()
}

// AddOpenAPI registers fn to extend the OpenAPI document at every request, after the routes of
// the function app were added. fn must be safe for concurrent use. Other surfaces mounted on
// the same function app (the durable engine) use it to add component schemas; their routes
// appear on their own when they carry a funchost.RouteDoc.
func (a *GraphHostApp) AddOpenAPI(fn func(doc *OpenAPIDocument)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.openapi = append(a.openapi, fn)
}

// OpenAPI builds the OpenAPI document of every HTTP function of the app (in host order, except
// the document's own route), then applies the AddOpenAPI extensions.
func (a *GraphHostApp) OpenAPI() *OpenAPIDocument {
	doc := &OpenAPIDocument{Title: a.opts.Title, Version: a.opts.Version, schemas: builtinSchemas()}
	prefix := a.app.RoutePrefix()
	a.mu.RLock()
	sse := a.streamType
	hooks := slices.Clone(a.openapi)
	for _, fn := range a.app.HTTPFunctions() {
		if fn.Name == "fg_openapi" {
			continue
		}
		path, params := openAPIPathOf(prefix, fn.Route)
		methods := fn.Methods
		if len(methods) == 0 {
			methods = []string{http.MethodGet}
		}
		for _, m := range methods {
			doc.AddPath(path, m, operationOf(fn, m, params, sse[fn.Name]))
		}
	}
	a.mu.RUnlock()
	for _, h := range hooks {
		h(doc)
	}
	return doc
}

// openAPIPathOf turns a route template into an OpenAPI path and its path parameters:
// constraints, defaults and optional markers are dropped.
func openAPIPathOf(prefix, route string) (string, []OpenAPIParameter) {
	segs := strings.Split(strings.Trim(route, "/"), "/")
	var params []OpenAPIParameter
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		name := strings.TrimLeft(strings.TrimSuffix(s[1:], "}"), "*")
		if j := strings.IndexAny(name, ":=?"); j >= 0 {
			name = name[:j]
		}
		segs[i] = "{" + name + "}"
		params = append(params, OpenAPIParameter{Name: name, In: "path", Required: true, Schema: &Schema{Type: "string"}})
	}
	path := "/" + strings.Join(segs, "/")
	if prefix != "" {
		path = "/" + prefix + path
	}
	return path, params
}

func operationOf(fn funchost.HTTPFunction, method string, params []OpenAPIParameter, sse bool) OpenAPIOperation {
	op := OpenAPIOperation{
		OperationID: fn.Name, Summary: fn.Doc.Summary, Description: fn.Doc.Description,
		Tags: fn.Doc.Tags, Parameters: params, Security: []map[string][]string{},
	}
	if fn.Doc.Request != nil && method != http.MethodGet && method != http.MethodHead {
		op.RequestBody = orderedObject{{"required", !fn.Doc.RequestOptional}, {"content", orderedObject{
			{"application/json", orderedObject{{"schema", fn.Doc.Request}}}}}}
	}
	ok := orderedObject{{"description", "OK"}}
	if fn.Doc.Response != nil {
		ctype := "application/json"
		if sse {
			ctype = "text/event-stream"
		}
		ok = append(ok, member{"content", orderedObject{{ctype, orderedObject{{"schema", fn.Doc.Response}}}}})
	}
	status := "200"
	if fn.Doc.Status != 0 {
		status = strconv.Itoa(fn.Doc.Status)
		ok[0] = member{"description", http.StatusText(fn.Doc.Status)}
	}
	responses := orderedObject{{status, ok}}
	for _, e := range fn.Doc.Errors {
		r := orderedObject{{"description", e.Description}}
		if e.Schema != nil {
			r = append(r, member{"content", orderedObject{{"application/json", orderedObject{{"schema", e.Schema}}}}})
		}
		responses = append(responses, member{strconv.Itoa(e.Status), r})
	}
	if fn.AuthLevel != funchost.AuthAnonymous {
		op.Security = []map[string][]string{{"functionKey": {}}, {"functionCode": {}}}
		responses = append(responses, member{"401", orderedObject{{"description", "Missing or invalid key (empty body, answered by the host)"}}})
	}
	if strings.HasPrefix(fn.Name, "fg_") {
		responses = append(responses, member{"default", orderedObject{{"description", "Error"}, {"content", orderedObject{
			{"application/json", orderedObject{{"schema", schemaRef("ErrorResponse")}}}}}}})
	}
	op.Responses = responses
	return op
}

// serveOpenAPI answers GET /api/openapi.json in the json.dumps style.
func (a *GraphHostApp) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	body, err := marshalDumps(a.OpenAPI())
	if err != nil {
		writeError(w, err)
		return
	}
	writeBody(w, http.StatusOK, "application/json", body)
}
