package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost/hosttest"
)

// fakeRuns is a func-field fake of engine.Runs; a nil field fails the call.
type fakeRuns struct {
	start   func(context.Context, engine.StartRunRequest) (engine.Run, error)
	get     func(context.Context, string) (engine.Run, error)
	raise   func(context.Context, string, string, json.RawMessage) error
	cancel  func(context.Context, string, string) error
	list    func(context.Context, engine.RunQuery) (engine.RunList, error)
	history func(context.Context, string, string, int) (engine.HistoryList, error)
	purge   func(context.Context, string) error
}

var errNotFaked = errors.New("fake: not implemented")

func (f *fakeRuns) StartRun(ctx context.Context, req engine.StartRunRequest) (engine.Run, error) {
	if f.start == nil {
		return engine.Run{}, errNotFaked
	}
	return f.start(ctx, req)
}

func (f *fakeRuns) GetRun(ctx context.Context, id string) (engine.Run, error) {
	if f.get == nil {
		return engine.Run{}, errNotFaked
	}
	return f.get(ctx, id)
}

func (f *fakeRuns) RaiseEvent(ctx context.Context, id, name string, payload json.RawMessage, _ ...engine.EventOption) error {
	if f.raise == nil {
		return errNotFaked
	}
	return f.raise(ctx, id, name, payload)
}

func (f *fakeRuns) CancelRun(ctx context.Context, id, reason string) error {
	if f.cancel == nil {
		return errNotFaked
	}
	return f.cancel(ctx, id, reason)
}

func (f *fakeRuns) ListRuns(ctx context.Context, q engine.RunQuery) (engine.RunList, error) {
	if f.list == nil {
		return engine.RunList{}, errNotFaked
	}
	return f.list(ctx, q)
}

func (f *fakeRuns) History(ctx context.Context, id, token string, limit int) (engine.HistoryList, error) {
	if f.history == nil {
		return engine.HistoryList{}, errNotFaked
	}
	return f.history(ctx, id, token, limit)
}

func (f *fakeRuns) PurgeRun(ctx context.Context, id string) error {
	if f.purge == nil {
		return errNotFaked
	}
	return f.purge(ctx, id)
}

var _ engine.Runs = (*fakeRuns)(nil)

// response is one HTTP answer.
type response struct {
	status int
	header http.Header
	body   string
}

// call sends one request through a transport. headers are name/value pairs.
func call(t *testing.T, tr hosttest.Transport, method, path, body string, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, tr.BaseURL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return response{status: res.StatusCode, header: res.Header, body: string(data)}
}

// expect checks the status and, when wantBody is not empty, the exact body and JSON type.
func (r response) expect(t *testing.T, what string, wantStatus int, wantBody string) {
	t.Helper()
	if r.status != wantStatus {
		t.Fatalf("%s: status %d, want %d (body %s)", what, r.status, wantStatus, r.body)
	}
	if wantBody == "" {
		return
	}
	if r.body != wantBody {
		t.Fatalf("%s: body\n got %s\nwant %s", what, r.body, wantBody)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q, want application/json", what, ct)
	}
}

// field decodes one top-level member of a JSON body.
func (r response) field(t *testing.T, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("decode body %s: %v", r.body, err)
	}
	return m[key]
}

// hostOf returns the host:port of a transport's base URL.
func hostOf(tr hosttest.Transport) string { return strings.TrimPrefix(tr.BaseURL, "http://") }

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
