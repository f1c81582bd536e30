package host

// Wire models of the native routes. They document the bodies (the OpenAPI document is
// generated from them) and suit clients; the handlers parse requests strictly by hand and do
// not decode into them.

// InvokeRequest is the body of POST graphs/<name>/invoke.
type InvokeRequest struct {
	// Input is the graph input; required.
	Input map[string]any `json:"input"`
	// Config is passed to the graph, e.g. {"configurable":{"thread_id":"t1"}}.
	Config map[string]any `json:"config,omitempty"`
	// Version is forwarded to graphs that accept it.
	Version *string `json:"version,omitempty"`
}

// StreamRequest is the body of POST graphs/<name>/stream.
type StreamRequest struct {
	Input   map[string]any `json:"input"`
	Config  map[string]any `json:"config,omitempty"`
	Version *string        `json:"version,omitempty"`
	// StreamMode is passed to the graph verbatim; default "values".
	StreamMode string `json:"stream_mode,omitempty"`
}

// InvokeResponse is the 200 body of invoke: an object output as is, any other output as
// {"result": "<text>"}.
type InvokeResponse struct {
	Output map[string]any `json:"output"`
}

// HealthResponse is the body of GET /api/health: {"status":"ok"}.
type HealthResponse struct {
	Status string `json:"status"`
}

// HealthDetailsResponse is the body of GET /api/health/details. Members added with
// AddHealthDetails follow `graphs`.
type HealthDetailsResponse struct {
	Status string      `json:"status"`
	Graphs []GraphInfo `json:"graphs"`
}

// ThreadStateResponse is the 200 body of the thread state route.
type ThreadStateResponse struct {
	Values   map[string]any `json:"values"`
	Next     []string       `json:"next"`
	Metadata map[string]any `json:"metadata"`
}
