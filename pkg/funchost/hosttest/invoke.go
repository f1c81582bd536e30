package hosttest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/google/uuid"
)

// ErrInvocationFailed reports an invocation the host counts as failed: the handler answered
// non-2xx, a body that is not JSON, or could not be reached.
var ErrInvocationFailed = errors.New("hosttest: invocation failed")

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
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "text/json" && !strings.HasSuffix(mt, "+json") {
		return nil, fmt.Errorf("%w: %s (%s): handler answered Content-Type %q, want application/json",
			ErrInvocationFailed, f.Name, id, resp.Header.Get("Content-Type"))
	}
	var res invocationResult
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%w: %s (%s): unparsable result: %v", ErrInvocationFailed, f.Name, id, err)
	}
	for _, line := range res.Logs {
		e.logf("hosttest: %s: %s", f.Name, line)
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
// Outputs entry matched case-insensitively. ok is false for a missing or null value.
func (r *invocationResult) output(name string) (json.RawMessage, bool) {
	var v json.RawMessage
	if name == "$return" {
		v = r.ReturnValue
	} else {
		for k, raw := range r.Outputs {
			if strings.EqualFold(k, name) {
				v = raw
				break
			}
		}
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// httpTriggerValue builds Data.<req> for a request as the host does.
func httpTriggerValue(r *http.Request, body []byte, params map[string]*string, identities []any) map[string]any {
	query := map[string]string{}
	for k, vs := range r.URL.Query() {
		query[k] = strings.Join(vs, ",")
	}
	headers := map[string][]string{}
	for k, vs := range r.Header {
		headers[k] = append([]string{}, vs...)
	}
	if r.Host != "" {
		headers["Host"] = []string{r.Host}
	}
	if params == nil {
		params = map[string]*string{}
	}
	v := map[string]any{
		"Url":        "http://" + r.Host + r.URL.RequestURI(),
		"Method":     r.Method,
		"Query":      query,
		"Headers":    headers,
		"Params":     params,
		"Identities": identities,
	}
	if body != nil {
		if isBinaryMediaType(r.Header.Get("Content-Type")) {
			v["Body"] = base64.StdEncoding.EncodeToString(body)
		} else {
			v["Body"] = string(body)
		}
	}
	return v
}

// isBinaryMediaType reports the media types whose bodies the host sends base64-encoded.
func isBinaryMediaType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt == "application/octet-stream" || hasPrefixFold(mt, "multipart/")
}

// identities is the Identities array: with a key, one claims identity carrying the auth level;
// without one, empty.
func identities(level funchost.KeyLevel) []any {
	if level == funchost.KeyLevelNone {
		return []any{}
	}
	return []any{map[string]any{
		"AuthenticationType": "WebJobsAuthLevel",
		"IsAuthenticated":    true,
		"Claims": []any{map[string]any{
			"Type":  "http://schemas.microsoft.com/2017/07/functions/claims/authlevel",
			"Value": string(level),
		}},
	}}
}

// httpMetadata is Metadata for an HTTP invocation: Query, Headers, route parameters and sys.
// Keys ending in "trigger" are dropped, as the host drops them.
func httpMetadata(f *function, trig map[string]any, params map[string]*string) map[string]any {
	md := map[string]any{"Query": trig["Query"], "Headers": trig["Headers"]}
	for k, v := range params {
		if v != nil {
			md[k] = *v
		}
	}
	for k := range md {
		if strings.HasSuffix(strings.ToLower(k), "trigger") {
			delete(md, k)
		}
	}
	md["sys"] = sysMetadata(f.Name)
	return md
}

// invokeHTTP runs a JSON-mode HTTP invocation and writes the http output to the caller.
func (e *Emulator) invokeHTTP(w http.ResponseWriter, r *http.Request, f *function, params map[string]*string, level funchost.KeyLevel) {
	var body []byte
	if r.ContentLength > 0 {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		body = b
	}
	var ids []any
	if funchost.PresentedKey(r) != "" || e.opts.AuthMode == AuthBypass {
		ids = identities(level)
	} else {
		ids = identities(funchost.KeyLevelNone)
	}
	trig := httpTriggerValue(r, body, params, ids)
	p := payload{Data: map[string]any{f.Trigger.Name: trig}, Metadata: httpMetadata(f, trig, params)}
	res, err := e.invoke(r.Context(), f, p)
	if err != nil {
		e.logf("hosttest: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if err := e.applyOutputs(f, res); err != nil {
		e.logf("hosttest: %s: %v", f.Name, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	name, ok := f.httpOutput()
	if !ok {
		writeEmptyObject(w)
		return
	}
	raw, ok := res.output(name)
	if !ok {
		writeEmptyObject(w)
		return
	}
	if err := writeHTTPOutput(w, raw); err != nil {
		e.logf("hosttest: %s: http output: %v", f.Name, err)
		w.WriteHeader(http.StatusInternalServerError)
	}
}
