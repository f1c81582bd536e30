package anthropic_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic"
	"github.com/funcgraph/funcgraph/pkg/model/anthropic/anthropictest"
)

func TestModel_Generate_VendorErrorsAreRequestedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status  int
		errType string
	}{
		{http.StatusBadRequest, "invalid_request_error"},
		{http.StatusTooManyRequests, "rate_limit_error"},
		{http.StatusInternalServerError, "api_error"},
		{529, "overloaded_error"},
	} {
		for _, stream := range []bool{false, true} {
			m, srv := newModel(t, anthropic.Config{}, anthropictest.Error(tc.status), anthropictest.Text("too late"))
			req := model.Request{Messages: []message.Message{message.Human("hi")}}
			if stream {
				req.OnText = func(string) error { return nil }
			}
			_, err := m.Generate(t.Context(), req)
			var apiErr *sdk.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("%d stream=%v: err = %v, want an *anthropic.Error", tc.status, stream, err)
			}
			if apiErr.StatusCode != tc.status || string(apiErr.Type()) != tc.errType {
				t.Errorf("%d stream=%v: status, type = %d, %q", tc.status, stream, apiErr.StatusCode, apiErr.Type())
			}
			if srv.Count() != 1 {
				t.Errorf("%d stream=%v: requested %d times, want once (no retries by default)", tc.status, stream, srv.Count())
			}
		}
	}
}

func TestModel_Generate_MaxRetries(t *testing.T) {
	t.Parallel()
	m, srv := newModel(t, anthropic.Config{MaxRetries: 2}, anthropictest.Error(529), anthropictest.Error(500), anthropictest.Text("at last"))
	resp, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "at last" || srv.Count() != 3 {
		t.Errorf("text %q after %d requests, want the third's", resp.Message.Text(), srv.Count())
	}
}

func TestModel_Generate_ErrorInsideTheStream(t *testing.T) {
	t.Parallel()
	reply := anthropictest.Text("half a")
	reply.StreamError = "overloaded_error"
	m, srv := newModel(t, anthropic.Config{}, reply)
	var pieces []string
	_, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")},
		OnText: func(s string) error { pieces = append(pieces, s); return nil }})
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.Type() != "overloaded_error" {
		t.Fatalf("err = %v, want an overloaded_error *anthropic.Error", err)
	}
	if len(pieces) == 0 || srv.Count() != 1 {
		t.Errorf("pieces %q, %d requests", pieces, srv.Count())
	}
}

func TestModel_Generate_WrongKey(t *testing.T) {
	t.Parallel()
	m, _ := newModel(t, anthropic.Config{APIKey: "sk-ant-wrong"}, anthropictest.Text("no"))
	_, err := m.Generate(t.Context(), model.Request{Messages: []message.Message{message.Human("hi")}})
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Type() != "authentication_error" {
		t.Fatalf("err = %v, want a 401 authentication_error", err)
	}
}

func TestModel_Generate_ContextCanceled(t *testing.T) {
	t.Parallel()
	m, _ := newModel(t, anthropic.Config{}, anthropictest.Text("no"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := m.Generate(ctx, model.Request{Messages: []message.Message{message.Human("hi")}})
	if !errors.Is(err, ctx.Err()) {
		t.Fatalf("err = %v, want %v", err, ctx.Err())
	}
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cfg anthropic.Config
		ok  bool
	}{
		"key only":         {anthropic.Config{APIKey: "k"}, true},
		"all set":          {anthropic.Config{APIKey: "k", Model: "m", BaseURL: "http://x", MaxTokens: 10, MaxRetries: 2}, true},
		"no key":           {anthropic.Config{Model: "m"}, false},
		"negative tokens":  {anthropic.Config{APIKey: "k", MaxTokens: -1}, false},
		"negative retries": {anthropic.Config{APIKey: "k", MaxRetries: -1}, false},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if _, err := anthropic.New(tc.cfg); (err == nil) != tc.ok {
			t.Errorf("%s: New = %v", name, err)
		}
	}
}
