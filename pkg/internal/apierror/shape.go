package apierror

import (
	"errors"
	"net/http"

	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// Shape is the wire format of one surface's error bodies.
type Shape struct {
	// internal is the message of an error without a public one (and of a body that does not
	// encode).
	internal string
	body     func(msg string, fields []Field) ([]byte, error)
}

// The shapes of the three surfaces.
var (
	// Hosting is the hosting routes' {"error":"error","detail":"<message>"}, compact
	// (non-ASCII as is, no HTML escaping).
	Hosting = Shape{internal: "Internal server error", body: hostingBody}
	// Platform is the platform routes' {"detail": "<message>"}, in Python json.dumps style.
	Platform = Shape{internal: "Internal server error", body: platformBody}
	// Runs is the runs API's {"error": "<message>"} followed by the error's Fields, in Python
	// json.dumps style.
	Runs = Shape{internal: "internal error", body: runsBody}
)

// HostingBody is the body of the Hosting shape; Error is always "error".
type HostingBody struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

func hostingBody(msg string, _ []Field) ([]byte, error) {
	return jsonenc.Append(nil, HostingBody{Error: "error", Detail: msg})
}

func platformBody(msg string, _ []Field) ([]byte, error) {
	return pyjson.Marshal(struct {
		Detail string `json:"detail"`
	}{msg})
}

func runsBody(msg string, fields []Field) ([]byte, error) {
	b, err := jsonenc.Append([]byte(`{"error":`), msg)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		b, _ = jsonenc.Append(append(b, ','), f.Name)
		if b, err = jsonenc.Append(append(b, ':'), f.Value); err != nil {
			return nil, err
		}
	}
	return pyjson.AppendReformat(nil, append(b, '}')), nil
}

// Reply returns the status (Status) and body that answer err in this shape. A refusal of the
// in-memory stores' byte budget without a public answer is answered as StorageFull. Any
// other error that is not an *Error, and one whose body does not encode, is a 500 with the
// shape's fixed text.
func (s Shape) Reply(err error) (int, []byte) {
	msg, fields := s.internal, []Field(nil)
	var e *Error
	if !errors.As(err, &e) {
		if full := StorageFull(err); full != nil {
			err = full
		}
	}
	if errors.As(err, &e) {
		msg, fields = e.Message, e.Fields
	}
	body, encErr := s.body(msg, fields)
	if encErr != nil {
		return http.StatusInternalServerError, s.Internal()
	}
	return Status(err), body
}

// Internal is the body of a 500 in this shape: the answer to an error without a public
// message, or to a success body that does not encode.
func (s Shape) Internal() []byte {
	body, _ := s.body(s.internal, nil)
	return body
}

// Write answers err in this shape: Content-Type application/json, Reply's status and body.
// Headers that go with the error (Retry-After) are the caller's, set before.
func (s Shape) Write(w http.ResponseWriter, err error) {
	status, body := s.Reply(err)
	WriteJSON(w, status, body)
}

// WriteJSON answers an encoded JSON body with status. The Functions host's JSON mode never
// sniffs a content type, so it is always set.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
