package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// APIKey is the key a Server accepts unless its APIKey field says otherwise.
const APIKey = "sk-ant-test"

// Reply is one scripted answer: a message (Content, StopReason, Usage) or, when Status is
// set, an error reply.
type Reply struct {
	// Content is the message's content blocks, in order.
	Content []Block
	// StopReason is the message's stop_reason; empty: "tool_use" when Content has a tool_use
	// block, else "end_turn".
	StopReason string
	// Refusal is the stop_details explanation of a "refusal" stop; empty, none is sent.
	Refusal string
	// Usage is the message's usage.
	Usage Usage
	// Model names the model that answered; empty: the request's.
	Model string
	// Status, when set, makes the reply an error with this HTTP status (429, 500, 529…) in
	// Anthropic's shape, of ErrorType (empty: the type Anthropic gives the status).
	Status int
	// ErrorType is the error's type: "rate_limit_error", "overloaded_error"…
	ErrorType string
	// StreamError, when set on a streamed reply, ends the stream after the content blocks
	// with an error event of this type (e.g. "overloaded_error") instead of message_delta
	// and message_stop.
	StreamError string
	// Chunk is how many characters of a text, a thinking or a tool's input each streamed
	// delta carries; 0: 4.
	Chunk int
}

// Block is a content block of a reply.
type Block struct {
	// Type is "text", "tool_use" or "thinking".
	Type string
	// Text is a text block's text.
	Text string
	// ID and Name are a tool_use block's id and tool name.
	ID, Name string
	// Input is a tool_use block's input, a JSON object; nil: {}.
	Input json.RawMessage
	// Thinking and Signature are a thinking block's.
	Thinking, Signature string
}

// Usage is a reply's usage, as Anthropic reports it.
type Usage struct {
	// InputTokens are the prompt's tokens that were neither read from nor written to the cache.
	InputTokens int64
	// OutputTokens are the reply's tokens.
	OutputTokens int64
	// CacheReadInputTokens are the prompt's tokens read from the cache.
	CacheReadInputTokens int64
	// CacheCreationInputTokens are the prompt's tokens written to the cache.
	CacheCreationInputTokens int64
}

// Text returns a reply of one text block.
func Text(text string) Reply { return Reply{Content: []Block{TextBlock(text)}} }

// Error returns an error reply with status and Anthropic's error type for it.
func Error(status int) Reply { return Reply{Status: status} }

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Type: "text", Text: text} }

// ToolUse returns a tool_use block calling the tool name with input, a JSON object.
func ToolUse(id, name, input string) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Input: json.RawMessage(input)}
}

// Request is a request the server was sent, its body decoded.
type Request struct {
	// Header is the request's header.
	Header http.Header `json:"-"`
	// Body is the request's JSON body as sent.
	Body json.RawMessage `json:"-"`
	// Model, MaxTokens, Stream, System, Messages, Tools, ToolChoice and OutputConfig are the
	// body's fields; System is nil when it was left out.
	Model        string            `json:"model"`
	MaxTokens    *int64            `json:"max_tokens"`
	Stream       bool              `json:"stream"`
	System       Blocks            `json:"system"`
	Messages     []InMessage       `json:"messages"`
	Tools        []json.RawMessage `json:"tools"`
	ToolChoice   json.RawMessage   `json:"tool_choice"`
	OutputConfig json.RawMessage   `json:"output_config"`
	// Rejected is the reason the server answered the request with an error of its own
	// (a 400 or 401 an adapter caused); empty for a request it answered with a reply.
	Rejected string `json:"-"`
}

// InMessage is a message of a request.
type InMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the message's content blocks (a string content is one text block).
	Content Blocks `json:"content"`
}

// InBlock is a content block of a request, its commonest fields decoded; Raw is all of it.
type InBlock struct {
	// Type is the block's type: "text", "image", "tool_use", "tool_result", "thinking"…
	Type string `json:"type"`
	// Text is a text block's text.
	Text string `json:"text"`
	// ID, Name and Input are a tool_use block's.
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// ToolUseID, IsError and Content are a tool_result block's.
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
	Content   Blocks `json:"content"`
	// Source is an image block's source.
	Source json.RawMessage `json:"source"`
	// Raw is the block's JSON.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a block and keeps its JSON in Raw.
func (b *InBlock) UnmarshalJSON(data []byte) error {
	type plain InBlock
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*b = InBlock(p)
	b.Raw = append(json.RawMessage(nil), data...)
	return nil
}

// Blocks is a list of content blocks; it decodes a string as one text block, as
// Anthropic reads a string content.
type Blocks []InBlock

// UnmarshalJSON decodes a list of blocks or a string.
func (bs *Blocks) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		raw, err := json.Marshal(map[string]string{"type": "text", "text": s})
		*bs = Blocks{{Type: "text", Text: s, Raw: raw}}
		return err
	}
	var list []InBlock
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	*bs = list
	return nil
}

// Server is a fake Anthropic Messages API on loopback. It is safe for concurrent use.
type Server struct {
	// URL is the server's base URL, the SDK's option.WithBaseURL.
	URL string
	// APIKey is the key the server accepts (APIKey unless changed before the first request).
	APIKey string

	srv *httptest.Server

	mu       sync.Mutex // guards the fields below
	replies  []Reply
	next     int
	requests []Request
}

// NewServer starts a server that answers with replies in order; past the last one it
// answers 500 with an api_error saying so. Close it when done.
func NewServer(replies ...Reply) *Server {
	s := &Server{APIKey: APIKey, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Add scripts more replies after the ones given so far.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests the server was sent, in order, those it rejected included.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests the server was sent.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Answered returns how many scripted replies the server has used.
func (s *Server) Answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("%s %s: not found", r.Method, r.URL.Path), "")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "read body: "+err.Error(), "")
		return
	}
	req := Request{Header: r.Header.Clone(), Body: body}
	status, errType, reason := s.check(r, &req)
	req.Rejected = reason

	s.mu.Lock()
	n := len(s.requests) + 1
	s.requests = append(s.requests, req)
	var reply Reply
	ok := reason == "" && s.next < len(s.replies)
	if ok {
		reply = s.replies[s.next]
		s.next++
	}
	total := len(s.replies)
	s.mu.Unlock()

	requestID := fmt.Sprintf("req_test_%d", n)
	w.Header().Set("request-id", requestID)
	switch {
	case reason != "":
		writeError(w, status, errType, reason, requestID)
	case !ok:
		writeError(w, http.StatusInternalServerError, "api_error",
			fmt.Sprintf("anthropictest: %d replies scripted, asked for reply %d", total, s.Answered()+1), requestID)
	case reply.Status != 0:
		writeError(w, reply.Status, reply.errorType(), http.StatusText(reply.Status), requestID)
	case req.Stream:
		writeStream(w, reply, replyModel(reply, req), n, requestID)
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(wireReply(reply, replyModel(reply, req), n))
	}
}

// check authenticates and validates a request, decoding its body into req. It returns the
// status, error type and reason of a rejection, or an empty reason.
func (s *Server) check(r *http.Request, req *Request) (int, string, string) {
	key := r.Header.Get("X-Api-Key")
	if key == "" {
		key, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	if key == "" || key != s.APIKey {
		return http.StatusUnauthorized, "authentication_error", "invalid x-api-key"
	}
	version := r.Header.Get("Anthropic-Version")
	if version == "" {
		return http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required"
	}
	if err := json.Unmarshal(req.Body, req); err != nil {
		return http.StatusBadRequest, "invalid_request_error", "body: " + err.Error()
	}
	if reason := validate(req, version); reason != "" {
		return http.StatusBadRequest, "invalid_request_error", reason
	}
	return 0, "", ""
}

func replyModel(reply Reply, req Request) string {
	if reply.Model != "" {
		return reply.Model
	}
	return req.Model
}

// errorType returns the reply's error type, or the one Anthropic gives its status.
func (r Reply) errorType() string {
	if r.ErrorType != "" {
		return r.ErrorType
	}
	switch r.Status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// writeError writes an error reply in Anthropic's shape. It asks a client that retries to
// retry at once (retry-after-ms: 1), so that tests of retries do not wait.
func writeError(w http.ResponseWriter, status int, errType, msg, requestID string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("retry-after-ms", "1")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody(errType, msg, requestID))
}

func errorBody(errType, msg, requestID string) map[string]any {
	body := map[string]any{"type": "error", "error": map[string]any{"type": errType, "message": msg}}
	if requestID != "" {
		body["request_id"] = requestID
	}
	return body
}
