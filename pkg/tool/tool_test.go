package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/tool"
)

type lookupIn struct {
	ID    int      `json:"id"`
	Tags  []string `json:"tags,omitempty"`
	Inner *struct {
		Note string `json:"note"`
	} `json:"inner,omitempty"`
}

type lookupOut struct {
	Found bool   `json:"found"`
	Title string `json:"title"`
}

func TestNew_RefusesWhatVendorsRefuse(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, lookupIn) (string, error) { return "", nil }
	for name, mk := range map[string]func() (*tool.Tool, error){
		"bad name":       func() (*tool.Tool, error) { return tool.New("has space", "d", ok) },
		"long name":      func() (*tool.Tool, error) { return tool.New(strings.Repeat("n", 65), "d", ok) },
		"no description": func() (*tool.Tool, error) { return tool.New("n", "", ok) },
		"nil function":   func() (*tool.Tool, error) { return tool.New[lookupIn, string]("n", "d", nil) },
		"not a struct": func() (*tool.Tool, error) {
			return tool.New("n", "d", func(context.Context, string) (string, error) { return "", nil })
		},
	} {
		if _, err := mk(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTool_Call(t *testing.T) {
	t.Parallel()
	var sawCall message.ToolCall
	boom := errors.New("backend down")
	lookup := tool.Must(tool.New("lookup", "Look a record up.", func(ctx context.Context, in lookupIn) (lookupOut, error) {
		sawCall, _ = tool.CallFrom(ctx)
		if in.ID == 0 {
			return lookupOut{}, boom
		}
		return lookupOut{Found: true, Title: "record " + strings.Join(in.Tags, "+")}, nil
	}, tool.RequiresApproval(), tool.WithRetry(durable.RetryPolicy{MaxAttempts: 3})))
	if !lookup.NeedsApproval() || lookup.RetryPolicy().MaxAttempts != 3 || lookup.Name() != "lookup" {
		t.Fatalf("options not kept: %v %+v", lookup.NeedsApproval(), lookup.RetryPolicy())
	}
	var schema map[string]any
	if err := json.Unmarshal(lookup.Def().Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("schema %s: %v", lookup.Def().Parameters, err)
	}
	if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "id" {
		t.Fatalf("required = %v, want [id] (omitempty fields are optional)", schema["required"])
	}
	call := message.ToolCall{ID: "call_9", Name: "lookup", Args: json.RawMessage(`{"id": 7, "tags": ["a","b"]}`)}
	out, err := lookup.Call(t.Context(), call)
	if err != nil || out != `{"found":true,"title":"record a+b"}` {
		t.Fatalf("call = %s, %v", out, err)
	}
	if sawCall.ID != "call_9" {
		t.Fatalf("the tool saw call %q, want call_9", sawCall.ID)
	}
	if _, err := lookup.Call(t.Context(), message.ToolCall{ID: "c", Args: json.RawMessage(`{"id": 0}`)}); !errors.Is(err, boom) || durable.IsNonRetryable(err) {
		t.Fatalf("a tool's own error: %v, want it as is (retryable)", err)
	}
	for _, args := range []string{`{"id": "seven"}`, `{"id": 1, "extra": true}`, `[1]`, `not json`} {
		_, err := lookup.Call(t.Context(), message.ToolCall{ID: "c", Args: json.RawMessage(args)})
		if !errors.Is(err, tool.ErrInvalidArguments) || !durable.IsNonRetryable(err) {
			t.Errorf("args %s: %v, want non-retryable ErrInvalidArguments", args, err)
		}
	}
	if out, err := lookup.Call(t.Context(), message.ToolCall{ID: "c"}); err == nil || out != "" {
		// no arguments decode as {}: id 0, the tool's own error
		t.Fatalf("no args: %q %v", out, err)
	}
}
