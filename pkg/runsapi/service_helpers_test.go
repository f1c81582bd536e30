package runsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
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

// hostOf returns the host:port of a transport's base URL.
func hostOf(tr funchosttest.Transport) string { return strings.TrimPrefix(tr.BaseURL, "http://") }

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
