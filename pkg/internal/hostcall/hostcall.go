// Package hostcall runs a hosted graph's invoke route in process, for the protocols (MCP,
// A2A) that offer hosted graphs beside the durable ones: the route's own handler, with every
// check it makes (body and depth limits, the thread lock, isolation, MaxWait), sees the
// protocol request's caller — its headers, its peer and what the function app knows of it —
// and its answer is read back, bounded in bytes.
package hostcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// Result is what the invoke route answered.
type Result struct {
	// Status is the route's HTTP status.
	Status int
	// Output is the route's {"output": …} member on 200, else nil.
	Output json.RawMessage
	// Message is the route's public message for any other status (its "detail"), or the
	// status text.
	Message string
	// TooLarge reports an answer past the limit: nothing else is set.
	TooLarge bool
}

// Invoke runs fn, a graph's invoke route, on input (a JSON object) and, when threadID is not
// empty, on that thread, for the caller of orig, under ctx (its cancellation ends the run).
// prefix is the route prefix. An answer past limit bytes is Result.TooLarge. The error is
// only for input that is no JSON object.
func Invoke(ctx context.Context, orig *http.Request, fn funchost.HTTPFunction, prefix string, input json.RawMessage, threadID string, limit int64) (Result, error) {
	body, err := invokeBody(input, threadID)
	if err != nil {
		return Result{}, err
	}
	url := "http://" + orig.Host + "/" + strings.Trim(prefix, "/") + "/" + fn.Route
	hr, err := http.NewRequestWithContext(valuesOf{ctx, orig.Context()}, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("hostcall: %w", err)
	}
	hr.Header = orig.Header.Clone()
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Del("Content-Length")
	hr.RemoteAddr = orig.RemoteAddr
	rec := &recorder{header: http.Header{}, limit: limit}
	fn.Handler.ServeHTTP(rec, hr)
	if rec.overflow {
		return Result{TooLarge: true}, nil
	}
	res := Result{Status: rec.status()}
	if res.Status == http.StatusOK {
		var ok struct {
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(rec.body.Bytes(), &ok) == nil && len(ok.Output) > 0 {
			res.Output = ok.Output
			return res, nil
		}
	}
	res.Message = http.StatusText(res.Status)
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(rec.body.Bytes(), &e) == nil && len(e.Detail) > 0 {
		var text string
		if json.Unmarshal(e.Detail, &text) == nil {
			res.Message = strings.TrimSpace(text)
		} else {
			res.Message = string(e.Detail) // a validation error's list, as the route answers it
		}
	}
	return res, nil
}

// ErrNotAnObject is returned by Invoke for input that is no JSON object.
var ErrNotAnObject = errors.New("hostcall: the input is not a JSON object")

// invokeBody is the invoke request of one call: {"input": …} and, on a thread, its config.
func invokeBody(input json.RawMessage, tid string) ([]byte, error) {
	if t := bytes.TrimSpace(input); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return nil, ErrNotAnObject
	}
	b := struct {
		Input  json.RawMessage `json:"input"`
		Config any             `json:"config,omitempty"`
	}{Input: input}
	if tid != "" {
		b.Config = map[string]any{"configurable": map[string]any{"thread_id": tid}}
	}
	return json.Marshal(b)
}

// valuesOf is the context of a call (its deadline and cancellation) with the values of the
// request that carried it.
type valuesOf struct {
	context.Context
	values context.Context
}

func (c valuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}

// recorder is the http.ResponseWriter of an in-process invoke: it keeps up to limit bytes
// of the body and notes an answer past them.
type recorder struct {
	header   http.Header
	code     int
	body     bytes.Buffer
	limit    int64
	overflow bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if int64(r.body.Len())+int64(len(p)) > r.limit {
		r.overflow = true
		return 0, fmt.Errorf("hostcall: answer past %d bytes", r.limit)
	}
	return r.body.Write(p)
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// LevelRank orders auth levels: anonymous 0, function 1, admin 2. A surface served at level
// L offers a hosted graph only when its route's rank is at most L's.
func LevelRank(l funchost.AuthLevel) int {
	switch l {
	case funchost.AuthAnonymous:
		return 0
	case funchost.AuthAdmin:
		return 2
	}
	return 1
}
