package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
)

// Reply is one scripted answer of a Server: an assistant message (Text, ToolCalls, Refusal)
// with its usage, or, when Status is set, an error.
type Reply struct {
	// Text is the assistant's text; streamed, it is sent in pieces (Pieces, else word by word).
	Text string
	// Pieces, when set, are the pieces a streamed Text is sent in; they must join to Text.
	Pieces []string
	// ToolCalls are the tool calls the assistant asks for.
	ToolCalls []ToolCall
	// Refusal is the assistant's refusal, sent instead of a text.
	Refusal string
	// FinishReason is the choice's finish_reason; empty, "tool_calls" when there are tool
	// calls, else "stop".
	FinishReason string
	// Usage is the reply's usage; sent as is (streamed, when include_usage was asked).
	Usage Usage
	// Model names the model in the reply; empty, the request's model.
	Model string
	// Status, when set, makes the reply an error: this HTTP status with Error as the body.
	Status int
	// Error is the error body of a Status reply; nil, a generic one for the status.
	Error *Error
	// StreamError, when set, fails a streamed reply midway, as the API can: its text is sent,
	// then this error as an event ({"error": …}) in place of the rest. A reply not streamed
	// ignores it.
	StreamError *Error
}

// ToolCall is a function tool call of a Reply.
type ToolCall struct {
	// ID names the call; empty, the server numbers it ("call_1_1": reply 1, call 1).
	ID string
	// Name is the function's name.
	Name string
	// Arguments is the call's arguments, a JSON object as text; streamed, it is split
	// across chunks.
	Arguments string
}

// Usage is the token usage of a Reply.
type Usage struct {
	// PromptTokens are the prompt's tokens, cached ones included.
	PromptTokens int64
	// CompletionTokens are the reply's tokens.
	CompletionTokens int64
	// CachedTokens are the prompt tokens read from the cache
	// (prompt_tokens_details.cached_tokens).
	CachedTokens int64
}

// Error is the body of an error reply, as the API sends it under "error".
type Error struct {
	// Message says what went wrong.
	Message string `json:"message"`
	// Type is the error's type ("rate_limit_error", "server_error", …).
	Type string `json:"type"`
	// Code is the error's code ("rate_limit_exceeded", "content_filter", …); may be empty.
	Code string `json:"code,omitempty"`
}

// Request is a request a Server got.
type Request struct {
	// Method and Path are the request's; Query is its query string.
	Method string
	Path   string
	Query  url.Values
	// Header is the request's header (Authorization, Api-Key, …).
	Header http.Header
	// Deployment is the Azure deployment of an Azure path; empty on the OpenAI path.
	Deployment string
	// APIVersion is the api-version query parameter.
	APIVersion string
	// Body is the request body decoded.
	Body ChatRequest
	// Raw is the request body as sent.
	Raw []byte
}

// Azure reports whether the request came on the Azure OpenAI path.
func (r Request) Azure() bool { return r.Deployment != "" }

// ChatRequest is the decoded body of a chat completion request: the fields a test asserts,
// with the rest in Raw of the Request.
type ChatRequest struct {
	Model               string            `json:"model"`
	Messages            []Message         `json:"messages"`
	Tools               []json.RawMessage `json:"tools,omitempty"`
	ToolChoice          json.RawMessage   `json:"tool_choice,omitempty"`
	ResponseFormat      json.RawMessage   `json:"response_format,omitempty"`
	MaxTokens           *int64            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64          `json:"temperature,omitempty"`
	Stream              bool              `json:"stream,omitempty"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
}

// Message is one message of a ChatRequest.
type Message struct {
	Role string `json:"role"`
	// Content is a string, a list of parts, or absent (an assistant message with tool calls).
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// Text returns the message's content when it is a string, else its text parts joined.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Server is a fake Chat Completions API on a loopback address. It is safe for concurrent
// use; requests take its replies in the order they arrive. A request it rejects (bad
// credentials, no api-version on the Azure path, a body that is no JSON) is recorded but
// takes no reply. Past its last reply it answers 500 (and still records the request).
type Server struct {
	// Key, when set, is the only credential accepted: "Authorization: Bearer <Key>" or
	// "Api-Key: <Key>"; other requests get 401. Set it before the first request.
	Key string

	srv *httptest.Server

	mu       sync.Mutex
	replies  []Reply
	requests []Request
	taken    int // how many requests took a reply (scripted or past the script)
}

// NewServer starts a Server on plain HTTP that answers with replies in order. Close it when
// done.
func NewServer(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewTLSServer starts a Server on HTTPS (a self-signed certificate that Client trusts), as
// Azure OpenAI's SDK options require to send a credential. Close it when done.
func NewTLSServer(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's root, the endpoint of an Azure OpenAI resource.
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is the OpenAI API's base URL on the server (URL + "/v1/").
func (s *Server) BaseURL() string { return s.srv.URL + "/v1/" }

// Client returns an HTTP client for the server (one that trusts a TLS server's certificate).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the chat completion requests the server got, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many chat completion requests the server got.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// serve routes a request: a chat completion on either path, else 404.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	deployment, ok := route(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, Error{Message: "openaitest: no route for " + r.URL.Path, Type: "invalid_request_error"})
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, Error{Message: "openaitest: POST only", Type: "invalid_request_error"})
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, Error{Message: "openaitest: read body: " + err.Error(), Type: "invalid_request_error"})
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(),
		Deployment: deployment, APIVersion: r.URL.Query().Get("api-version"), Raw: raw}
	decodeErr := json.Unmarshal(raw, &req.Body)

	s.mu.Lock()
	s.requests = append(s.requests, req)
	bad := s.reject(req, decodeErr)
	n, scripted := s.taken, false
	var reply Reply
	if bad == nil { // a request the API would reject takes no reply
		s.taken++
		if scripted = n < len(s.replies); scripted {
			reply = s.replies[n]
		}
	}
	s.mu.Unlock()

	switch {
	case bad != nil:
		writeError(w, bad.status, bad.Error)
	case !scripted:
		writeError(w, http.StatusInternalServerError, Error{Message: fmt.Sprintf("openaitest: %d replies scripted, asked for reply %d", n, n+1), Type: "server_error"})
	case reply.Status != 0:
		e := Error{Message: http.StatusText(reply.Status), Type: "server_error"}
		if reply.Error != nil {
			e = *reply.Error
		}
		writeError(w, reply.Status, e)
	case req.Body.Stream:
		s.stream(w, req, reply, n)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(completion(req, reply, n))
	}
}

// rejection is the error answer to a request the API would reject.
type rejection struct {
	status int
	Error
}

// reject returns the rejection of req for its credentials (when s.Key is set), a missing
// api-version on the Azure path, or a body that is no chat completion request; nil for a
// request to answer. s.mu is held.
func (s *Server) reject(req Request, decodeErr error) *rejection {
	switch {
	case s.Key != "" && req.Header.Get("Authorization") != "Bearer "+s.Key && req.Header.Get("Api-Key") != s.Key:
		return &rejection{http.StatusUnauthorized, Error{Message: "openaitest: bad credentials", Type: "invalid_request_error", Code: "invalid_api_key"}}
	case req.Azure() && req.APIVersion == "":
		return &rejection{http.StatusBadRequest, Error{Message: "openaitest: api-version required", Type: "invalid_request_error"}}
	case decodeErr != nil:
		return &rejection{http.StatusBadRequest, Error{Message: "openaitest: decode body: " + decodeErr.Error(), Type: "invalid_request_error"}}
	}
	return nil
}

// route returns the deployment of an Azure chat completions path, "" for the OpenAI path,
// and whether path is a chat completions path at all.
func route(path string) (deployment string, ok bool) {
	if rest, found := strings.CutPrefix(path, "/openai/deployments/"); found {
		d, tail, _ := strings.Cut(rest, "/")
		return d, d != "" && tail == "chat/completions"
	}
	return "", strings.HasSuffix(path, "/chat/completions")
}

// writeError writes an error body as the API does: {"error": {…}}.
func writeError(w http.ResponseWriter, status int, e Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": errorBody(e)})
}

// errorBody returns e as the API sends it under "error".
func errorBody(e Error) map[string]any {
	return map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": nullable(e.Code)}
}

// nullable returns s, or nil (JSON null) when it is empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
