package funchosttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/google/uuid"
)

// ErrInvocationFailed reports an invocation the host counts as failed: the handler answered
// non-2xx, a body that is not JSON, or could not be reached.
var ErrInvocationFailed = errors.New("funchosttest: invocation failed")

// invocationResult is the handler's answer, as the host reads it.
type invocationResult struct {
	Outputs     map[string]json.RawMessage `json:"Outputs"`
	Logs        []string                   `json:"Logs"`
	ReturnValue json.RawMessage            `json:"ReturnValue"`
}

// payload is the JSON-mode invocation request.
type payload struct {
	Data     map[string]any `json:"Data"`
	Metadata map[string]any `json:"Metadata"`
}

func newGUID() string { return uuid.NewString() }

// sysMetadata is Metadata.sys.
func sysMetadata(function string) map[string]any {
	return map[string]any{
		"MethodName": function,
		"UtcNow":     time.Now().UTC().Format(time.RFC3339Nano),
		"RandGuid":   newGUID(),
	}
}

// invoke posts the payload to `/{FunctionName}` and reads the result. It returns
// ErrInvocationFailed for a non-2xx answer, a body that does not parse, or a transport error.
func (e *Emulator) invoke(ctx context.Context, f *function, p payload) (*invocationResult, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: encode payload: %w", f.Name, err)
	}
	id := newGUID()
	resp, data, err := e.post(ctx, f.Name, id, body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w: %s (%s): handler answered %d", ErrInvocationFailed, f.Name, id, resp.StatusCode)
	}
	// The host picks a reader by media type: only JSON media types can be read.
	// (Web API's JSON formatter: application/json and text/json, no +json suffixes.)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "text/json" {
		return nil, fmt.Errorf("%w: %s (%s): handler answered Content-Type %q, want application/json",
			ErrInvocationFailed, f.Name, id, resp.Header.Get("Content-Type"))
	}
	var res invocationResult
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%w: %s (%s): unparsable result: %v", ErrInvocationFailed, f.Name, id, err)
	}
	for _, line := range res.Logs {
		e.logf("funchosttest: %s: %s", f.Name, line)
	}
	return &res, nil
}

// post sends one JSON invocation to the handler under functionTimeout and returns the
// response with its whole body. The host does not pass the caller's cancellation on: the
// invocation runs until it ends, times out, or the emulator closes, whatever ctx does.
func (e *Emulator) post(_ context.Context, function, id string, body []byte) (*http.Response, []byte, error) {
	type answer struct {
		resp *http.Response
		data []byte
	}
	a, err := guarded(e, e.bg, function, func(ctx context.Context, base string) (answer, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+function, bytes.NewReader(body))
		if err != nil {
			return answer{}, fmt.Errorf("invoke %s: %w", function, err)
		}
		req.Header.Set("Content-Type", "application/json")
		setHostHeaders(req.Header, id)
		resp, err := e.client.Do(req)
		if err != nil {
			return answer{}, fmt.Errorf("%w: %s (%s): %v", ErrInvocationFailed, function, id, err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return answer{}, fmt.Errorf("%w: %s (%s): read: %v", ErrInvocationFailed, function, id, err)
		}
		return answer{resp, data}, nil
	}, nil)
	return a.resp, a.data, err
}

// output returns the value for an output binding: ReturnValue for `$return`, otherwise the
// Outputs entry, matched case-sensitively as the host does. ok is false for a missing or null
// value.
func (r *invocationResult) output(name string) (json.RawMessage, bool) {
	v, present := r.lookup(name)
	if !present || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// lookup returns the raw value for an output binding and whether it is present at all (a
// present value may be null).
func (r *invocationResult) lookup(name string) (json.RawMessage, bool) {
	var v json.RawMessage
	var ok bool
	if name == "$return" {
		v, ok = r.ReturnValue, r.ReturnValue != nil
	} else {
		v, ok = r.Outputs[name]
	}
	v = bytes.TrimSpace(v)
	return v, ok && len(v) > 0
}

// invokeHTTP runs a JSON-mode HTTP invocation and writes the http output to the caller.
func (e *Emulator) invokeHTTP(w http.ResponseWriter, r *http.Request, f *function, params map[string]*string) {
	var body []byte
	if r.ContentLength > 0 {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			// Kestrel: 413 past the body limit, 400 for a body it cannot read; empty bodies.
			var be *funchost.BodyError
			if errors.As(funchost.ClassifyBodyError(err), &be) && errors.Is(be, funchost.ErrBodyTooLarge) {
				w.WriteHeader(http.StatusRequestEntityTooLarge)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = b
	}
	level, keyName := e.callerKey(r, f)
	trig := httpTriggerValue(r, body, params, identities(level, keyName))
	p := payload{Data: map[string]any{f.Trigger.Name: trig}, Metadata: httpMetadata(f, r, body, params)}
	// The host sends without the caller's cancellation: a caller that goes away does not
	// cancel the invocation.
	res, err := e.invoke(context.WithoutCancel(r.Context()), f, p)
	if err != nil {
		e.logf("funchosttest: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if err := e.applyOutputs(f, res); err != nil {
		e.logf("funchosttest: %s: %v", f.Name, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	name, ok := f.httpOutput()
	if !ok {
		writeEmptyObject(w)
		return
	}
	raw, ok := res.lookup(name)
	if !ok {
		writeEmptyObject(w)
		return
	}
	if err := writeHTTPOutput(w, raw); err != nil {
		e.logf("funchosttest: %s: http output: %v", f.Name, err)
		w.WriteHeader(http.StatusInternalServerError)
	}
}
