package host

// Wire models of the native routes: the OpenAPI document's schemas of their bodies are
// generated from them. The handlers parse requests strictly by hand and do not decode into
// them.

// invokeRequestModel is the body of POST graphs/<name>/invoke.
type invokeRequestModel struct {
	// Input is the graph input; required.
	Input map[string]any `json:"input"`
	// Config is passed to the graph, e.g. {"configurable":{"thread_id":"t1"}}.
	Config map[string]any `json:"config,omitempty"`
	// Version is forwarded to graphs that accept it.
	Version *string `json:"version,omitempty"`
}

// streamRequestModel is the body of POST graphs/<name>/stream.
type streamRequestModel struct {
	Input   map[string]any `json:"input"`
	Config  map[string]any `json:"config,omitempty"`
	Version *string        `json:"version,omitempty"`
	// StreamMode is passed to the graph verbatim; default "values".
	StreamMode string `json:"stream_mode,omitempty"`
}

// invokeResponseModel is the 200 body of invoke: an object output as is, any other output as
// {"result": "<text>"}.
type invokeResponseModel struct {
	Output map[string]any `json:"output"`
}

// healthResponseModel is the body of GET /api/health: {"status":"ok"}.
type healthResponseModel struct {
	Status string `json:"status"`
}

// healthDetailsModel is the body of GET /api/health/details. Members added with
// AddHealthDetails follow `graphs`.
type healthDetailsModel struct {
	Status string `json:"status"`
	// FuncgraphVersion is the version of funcgraph the binary was built with (launch.Version).
	FuncgraphVersion string      `json:"funcgraph_version"`
	Graphs           []GraphInfo `json:"graphs"`
}

// threadStateModel is the 200 body of the thread state route.
type threadStateModel struct {
	Values   map[string]any `json:"values"`
	Next     []string       `json:"next"`
	Metadata map[string]any `json:"metadata"`
}
