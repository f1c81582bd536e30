package funchost

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// invocationRequest is the JSON body the host posts to `/{FunctionName}` in the default
// (non-forwarding) custom-handler protocol.
type invocationRequest struct {
	Data     map[string]json.RawMessage `json:"Data"`
	Metadata map[string]json.RawMessage `json:"Metadata"`
}

// invocationResponse is the JSON body a handler answers the host with.
type invocationResponse struct {
	Outputs     map[string]any `json:"Outputs"`
	Logs        []string       `json:"Logs"`
	ReturnValue any            `json:"ReturnValue"`
}

// httpTrigger is the httpTrigger object of an invocation (`Data.<binding>`).
type httpTrigger struct {
	URL     string
	Method  string
	Query   map[string]string
	Headers map[string][]string
	// Params holds route values; an unmatched optional parameter is nil.
	Params map[string]*string
	// Identities is the raw claims identities array, if any.
	Identities json.RawMessage
	// Body is the decoded request body, nil when the host sent none.
	Body []byte

	// header is Headers as the rebuilt request's header, when the hot path read them so
	// (Headers is then nil).
	header http.Header
}

// contentType is the trigger's first Content-Type value, in any case.
func (t *httpTrigger) contentType() string {
	if t.header != nil {
		return t.header.Get("Content-Type")
	}
	return headerValue(t.Headers, "Content-Type")
}

// QueueMessage is a decoded queue-trigger invocation.
type QueueMessage struct {
	// Body is the message text, unwrapped from the host's double JSON encoding.
	Body            []byte
	ID              string
	DequeueCount    int64
	PopReceipt      string
	InsertionTime   time.Time
	ExpirationTime  time.Time
	NextVisibleTime time.Time
}

// TimerInfo is the timer-trigger value.
type TimerInfo struct {
	Schedule       TimerSchedule        `json:"Schedule"`
	ScheduleStatus *TimerScheduleStatus `json:"ScheduleStatus"`
	IsPastDue      bool                 `json:"IsPastDue"`
}

// TimerSchedule is the schedule part of TimerInfo.
type TimerSchedule struct {
	AdjustForDST bool `json:"AdjustForDST"`
}

// TimerScheduleStatus is the monitor's record of a timer schedule; nil without a monitor.
type TimerScheduleStatus struct {
	Last        time.Time `json:"Last"`
	Next        time.Time `json:"Next"`
	LastUpdated time.Time `json:"LastUpdated"`
}

type wireHTTPTrigger struct {
	URL        string                     `json:"Url"`
	Method     string                     `json:"Method"`
	Query      json.RawMessage            `json:"Query"`
	Headers    map[string]wireStrings     `json:"Headers"`
	Params     map[string]json.RawMessage `json:"Params"`
	Identities json.RawMessage            `json:"Identities"`
	Body       json.RawMessage            `json:"Body"`
}

// wireStrings accepts a header value sent as an array of strings (the host's shape), a plain
// string or null.
type wireStrings []string

// UnmarshalJSON implements json.Unmarshaler.
func (w *wireStrings) UnmarshalJSON(data []byte) error {
	vals, err := stringList(data)
	*w = vals
	return err
}

// decodeHTTPTrigger decodes an httpTrigger value tolerantly: Query as an object or as a string
// holding an object, header values as arrays or plain strings, Body as text (base64 for
// octet-stream and multipart content), absent or null Body as no body.
func decodeHTTPTrigger(raw json.RawMessage) (*httpTrigger, error) {
	var w wireHTTPTrigger
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("%w: http trigger: %v", errBadInvocation, err)
	}
	return w.decode()
}

func (w *wireHTTPTrigger) decode() (*httpTrigger, error) {
	if w.Method == "" {
		return nil, fmt.Errorf("%w: http trigger has no Method", errBadInvocation)
	}
	t := &httpTrigger{URL: w.URL, Method: strings.ToUpper(w.Method), Identities: w.Identities}
	var err error
	if t.Query, err = decodeQuery(w.Query); err != nil {
		return nil, err
	}
	if len(w.Headers) > 0 {
		t.Headers = make(map[string][]string, len(w.Headers))
		for k, v := range w.Headers {
			t.Headers[k] = v
		}
	}
	if len(w.Params) > 0 {
		t.Params = make(map[string]*string, len(w.Params))
		for k, v := range w.Params {
			t.Params[k] = optionalString(v)
		}
	}
	if t.Body, err = decodeBody(w.Body, headerValue(t.Headers, "Content-Type")); err != nil {
		return nil, err
	}
	return t, nil
}

func decodeQuery(raw json.RawMessage) (map[string]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: Query: %v", errBadInvocation, err)
		}
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		raw = json.RawMessage(s)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: Query must be an object: %v", errBadInvocation, err)
	}
	q := make(map[string]string, len(obj))
	for k, v := range obj {
		vals, err := stringList(v)
		if err != nil {
			return nil, fmt.Errorf("%w: Query %q: %v", errBadInvocation, k, err)
		}
		q[k] = strings.Join(vals, ",")
	}
	return q, nil
}

// stringList accepts a string, an array of strings or null.
func stringList(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, nil
	case raw[0] == '[':
		var vals []string
		if err := json.Unmarshal(raw, &vals); err != nil {
			return nil, err
		}
		return vals, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	return []string{string(raw)}, nil
}

func optionalString(raw json.RawMessage) *string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return &s
	}
	s = string(raw)
	return &s
}

func headerValue(h map[string][]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// decodeBody turns the trigger's Body into bytes. The host sends a string (base64 for binary
// media types); a JSON value of another kind is taken as its raw text.
func decodeBody(raw json.RawMessage, contentType string) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '"' {
		return []byte(raw), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%w: Body: %v", errBadInvocation, err)
	}
	if isBinaryMediaType(contentType) {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%w: Body is not base64 for %s", errBadInvocation, contentType)
		}
		return b, nil
	}
	return []byte(s), nil
}

// isBinaryMediaType reports the media types whose bodies the host sends base64-encoded.
func isBinaryMediaType(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";") // the media type, without parameters
	mt = strings.TrimSpace(mt)
	return strings.EqualFold(mt, "application/octet-stream") ||
		len(mt) > len("multipart/") && strings.EqualFold(mt[:len("multipart/")], "multipart/")
}

// decodeStringTrigger decodes a string trigger value as the host sends it. The host
// JSON-encodes string values twice (`hello` arrives as "\"hello\""); docs show them encoded
// once. It unwraps once more when the decoded text is itself a JSON string. An object or array
// value is returned as its JSON text.
func decodeStringTrigger(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("%w: trigger value is missing", errBadInvocation)
	}
	if raw[0] != '"' {
		return []byte(raw), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%w: trigger value: %v", errBadInvocation, err)
	}
	if t := strings.TrimSpace(s); len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		var inner string
		if json.Unmarshal([]byte(t), &inner) == nil {
			return []byte(inner), nil
		}
	}
	return []byte(s), nil
}

// decodeQueueMessage decodes a queue-trigger invocation: the trigger value under binding and
// the message properties from Metadata.
func decodeQueueMessage(req *invocationRequest, binding string) (QueueMessage, error) {
	raw, ok := lookupFold(req.Data, binding)
	if !ok {
		return QueueMessage{}, fmt.Errorf("%w: Data has no %q", errBadInvocation, binding)
	}
	body, err := decodeStringTrigger(raw)
	if err != nil {
		return QueueMessage{}, err
	}
	msg := QueueMessage{Body: body}
	meta := req.Metadata
	// String metadata arrives double-encoded: unwrap it like the trigger.
	if v, ok := lookupFold(meta, "Id"); ok {
		if b, err := decodeStringTrigger(v); err == nil {
			msg.ID = string(b)
		}
	}
	if v, ok := lookupFold(meta, "PopReceipt"); ok {
		if b, err := decodeStringTrigger(v); err == nil {
			msg.PopReceipt = string(b)
		}
	}
	if v, ok := lookupFold(meta, "DequeueCount"); ok {
		var n json.Number
		if err := json.Unmarshal(bytes.Trim(v, `"`), &n); err == nil {
			msg.DequeueCount, _ = n.Int64()
		}
	}
	for key, dst := range map[string]*time.Time{
		"InsertionTime": &msg.InsertionTime, "ExpirationTime": &msg.ExpirationTime, "NextVisibleTime": &msg.NextVisibleTime,
	} {
		if v, ok := lookupFold(meta, key); ok {
			_ = json.Unmarshal(v, dst) // best effort: message times are informational
		}
	}
	return msg, nil
}

// decodeTimerInfo decodes a timer-trigger value under binding.
func decodeTimerInfo(req *invocationRequest, binding string) (TimerInfo, error) {
	raw, ok := lookupFold(req.Data, binding)
	if !ok {
		return TimerInfo{}, fmt.Errorf("%w: Data has no %q", errBadInvocation, binding)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		s, err := decodeStringTrigger(raw)
		if err != nil {
			return TimerInfo{}, err
		}
		raw = s
	}
	var info TimerInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return TimerInfo{}, fmt.Errorf("%w: timer info: %v", errBadInvocation, err)
	}
	return info, nil
}

// lookupFold finds a key case-insensitively (binding names are case-insensitive in the host).
func lookupFold(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}
