package host

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/openapi"
)

// AddOpenAPI registers fn to extend the OpenAPI document at every request, after the routes of
// the function app were added. fn must be safe for concurrent use. Other surfaces mounted on
// the same function app (the durable engine) use it to add component schemas; their routes
// appear on their own when they carry a funchost.RouteDoc.
func (a *GraphHostApp) AddOpenAPI(fn func(doc *openapi.Document)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.openapiExt = append(a.openapiExt, fn)
}

// OpenAPI builds the OpenAPI document served at GET /api/openapi.json: every HTTP function of
// the app (in host order, except the document's own route) with its funchost.RouteDoc, the
// schemas of the hosting routes' bodies and the function-key security schemes, then the
// AddOpenAPI extensions.
func (a *GraphHostApp) OpenAPI() *openapi.Document {
	doc := &openapi.Document{Title: a.opts.Title, Version: a.opts.Version}
	for _, m := range builtinSchemas() {
		doc.AddSchema(m.Key, m.Value)
	}
	doc.AddSecurityScheme("functionKey", openapi.Object{{Key: "type", Value: "apiKey"}, {Key: "in", Value: "header"}, {Key: "name", Value: "x-functions-key"}})
	doc.AddSecurityScheme("functionCode", openapi.Object{{Key: "type", Value: "apiKey"}, {Key: "in", Value: "query"}, {Key: "name", Value: "code"}})
	prefix := a.app.RoutePrefix()
	a.mu.RLock()
	sse := a.streamType
	hooks := slices.Clone(a.openapiExt)
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
func openAPIPathOf(prefix, route string) (string, []openapi.Parameter) {
	segs := strings.Split(strings.Trim(route, "/"), "/")
	var params []openapi.Parameter
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		name := strings.TrimLeft(strings.TrimSuffix(s[1:], "}"), "*")
		if j := strings.IndexAny(name, ":=?"); j >= 0 {
			name = name[:j]
		}
		segs[i] = "{" + name + "}"
		params = append(params, openapi.PathParameter(name))
	}
	path := "/" + strings.Join(segs, "/")
	if prefix != "" {
		path = "/" + prefix + path
	}
	return path, params
}

// operationOf documents method on fn's route from its funchost.RouteDoc.
func operationOf(fn funchost.HTTPFunction, method string, params []openapi.Parameter, sse bool) openapi.Operation {
	op := openapi.Operation{
		OperationID: fn.Name, Summary: fn.Doc.Summary, Description: fn.Doc.Description,
		Tags: fn.Doc.Tags, Parameters: params, Security: []map[string][]string{},
	}
	if fn.Doc.Request != nil && method != http.MethodGet && method != http.MethodHead {
		op.RequestBody = openapi.Object{{Key: "required", Value: !fn.Doc.RequestOptional},
			{Key: "content", Value: content("application/json", fn.Doc.Request)}}
	}
	okDescription, status := "OK", "200"
	if fn.Doc.Status != 0 {
		okDescription, status = http.StatusText(fn.Doc.Status), strconv.Itoa(fn.Doc.Status)
	}
	ok := responseObject(okDescription, "application/json", fn.Doc.Response)
	if sse && fn.Doc.Response != nil {
		ok = responseObject(okDescription, "text/event-stream", fn.Doc.Response)
	}
	responses := openapi.Object{{Key: status, Value: ok}}
	for _, e := range fn.Doc.Errors {
		responses = append(responses, openapi.Member{Key: strconv.Itoa(e.Status), Value: responseObject(e.Description, "application/json", e.Schema)})
	}
	if fn.AuthLevel != funchost.AuthAnonymous {
		op.Security = []map[string][]string{{"functionKey": {}}, {"functionCode": {}}}
		responses = append(responses, openapi.Member{Key: "401", Value: responseObject("Missing or invalid key (empty body, answered by the host)", "", nil)})
	}
	if strings.HasPrefix(fn.Name, "fg_") {
		responses = append(responses, openapi.Member{Key: "default", Value: responseObject("Error", "application/json", openapi.Ref("ErrorResponse"))})
	}
	op.Responses = responses
	return op
}

// responseObject is a response object: its description, and the content of mediaType when schema
// is not nil.
func responseObject(description, mediaType string, schema any) openapi.Object {
	r := openapi.Object{{Key: "description", Value: description}}
	if schema != nil {
		r = append(r, openapi.Member{Key: "content", Value: content(mediaType, schema)})
	}
	return r
}

// content is the content object of one media type with its schema.
func content(mediaType string, schema any) openapi.Object {
	return openapi.Object{{Key: mediaType, Value: openapi.Object{{Key: "schema", Value: schema}}}}
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

// builtinSchemas are the component schemas of the native wire models, in document order.
func builtinSchemas() openapi.Object {
	models := []struct {
		name string
		t    reflect.Type
	}{
		{"InvokeRequest", reflect.TypeFor[invokeRequestModel]()},
		{"StreamRequest", reflect.TypeFor[streamRequestModel]()},
		{"InvokeResponse", reflect.TypeFor[invokeResponseModel]()},
		{"ThreadStateResponse", reflect.TypeFor[threadStateModel]()},
		{"HealthResponse", reflect.TypeFor[healthResponseModel]()},
		{"HealthDetailsResponse", reflect.TypeFor[healthDetailsModel]()},
		{"GraphInfo", reflect.TypeFor[GraphInfo]()},
		{"ErrorResponse", reflect.TypeFor[apierror.HostingBody]()},
	}
	out := make(openapi.Object, 0, len(models))
	for _, m := range models {
		out = append(out, openapi.Member{Key: m.name, Value: openapi.SchemaOf(m.t)})
	}
	return out
}

// invokeRequestSchema describes a graph's invoke or stream body; with a request model the
// input is that model's schema.
func invokeRequestSchema(model reflect.Type, stream bool) *openapi.Schema {
	name := "InvokeRequest"
	if stream {
		name = "StreamRequest"
	}
	if model == nil {
		return openapi.Ref(name)
	}
	s := openapi.SchemaOf(reflect.TypeFor[invokeRequestModel]())
	if stream {
		s = openapi.SchemaOf(reflect.TypeFor[streamRequestModel]())
	}
	s.Properties[0].Schema = openapi.SchemaOf(model)
	return s
}

// invokeResponseSchema describes a graph's invoke response; with a response model the output
// is that model's schema.
func invokeResponseSchema(model reflect.Type) *openapi.Schema {
	if model == nil {
		return openapi.Ref("InvokeResponse")
	}
	s := openapi.SchemaOf(reflect.TypeFor[invokeResponseModel]())
	s.Properties[0].Schema = openapi.SchemaOf(model)
	return s
}

// sseSchema describes a buffered SSE body.
func sseSchema() *openapi.Schema {
	return &openapi.Schema{Type: "string", Description: "Buffered server-sent events: `event: data` frames, at most one `event: error` frame, then `event: end`."}
}
