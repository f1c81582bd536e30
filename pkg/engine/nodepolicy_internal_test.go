package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

type lateState struct {
	N int `json:"n"`
}

// TestExecuteNode_TimeoutAndStepContext: without a timeout the handler's result counts; with
// one, a step context that ends first is not a timeout of the handler: its error comes back as
// is, for the engine to leave the work item to a retry.
func TestExecuteNode_TimeoutAndStepContext(t *testing.T) {
	t.Parallel()
	b := durable.NewManifestBuilder[lateState]("late")
	b.SetEntrypoint("n")
	if err := b.AddNode("n", func(ctx context.Context, _ lateState) (any, error) {
		<-ctx.Done()
		return durable.Update{"n": 1}, nil
	}, durable.Terminal()); err != nil {
		t.Fatal(err)
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if state, err := executeNode(ctx, g, "n", 0, json.RawMessage(`{}`)); err != nil || string(state) != `{"n":1}` {
		t.Fatalf("executeNode without timeout = %s, %v", state, err)
	}
	if _, err := executeNode(ctx, g, "n", time.Hour, json.RawMessage(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("executeNode on a cancelled step = %v, want context.Canceled", err)
	}
	_, err = executeNode(t.Context(), g, "n", time.Millisecond, json.RawMessage(`{}`))
	var herr *durable.HandlerError
	if !errors.As(err, &herr) || !errors.Is(err, context.DeadlineExceeded) || herr.Name != "n" {
		t.Fatalf("executeNode past its deadline = %v, want a timed-out attempt of n", err)
	}
}

// TestNodeFailureJSON_CutsLongMessagesAtARuneBoundary: a message over maxFailureBytes is cut
// to its longest prefix that fits and ends on a whole character, whatever the width of the
// character the limit falls in; a message that fits is kept whole.
func TestNodeFailureJSON_CutsLongMessagesAtARuneBoundary(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, msg string
		want      int // the bytes kept
	}{
		{"fits", strings.Repeat("é", maxFailureBytes/2), maxFailureBytes},
		{"ascii", strings.Repeat("x", maxFailureBytes+1), maxFailureBytes},
		{"limit on a character's start", strings.Repeat("é", maxFailureBytes), maxFailureBytes},
		{"limit in a 2-byte character", "x" + strings.Repeat("é", maxFailureBytes), maxFailureBytes - 1},
		{"limit at a 3-byte character's second byte", strings.Repeat("€", maxFailureBytes), maxFailureBytes - 1},
		{"limit at a 3-byte character's last byte", "xx" + strings.Repeat("€", maxFailureBytes), maxFailureBytes - 2},
		{"limit at a 4-byte character's second byte", "xxx" + strings.Repeat("😀", maxFailureBytes), maxFailureBytes - 1},
		{"limit at a 4-byte character's last byte", "x" + strings.Repeat("😀", maxFailureBytes), maxFailureBytes - 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f durable.NodeFailure
			if err := json.Unmarshal([]byte(nodeFailureJSON("work", tt.msg)), &f); err != nil {
				t.Fatal(err)
			}
			if f.Node != "work" || len(f.Error) != tt.want || !strings.HasPrefix(tt.msg, f.Error) || !utf8.ValidString(f.Error) {
				t.Errorf("kept %d bytes (a prefix: %v, valid UTF-8: %v), want the first %d",
					len(f.Error), strings.HasPrefix(tt.msg, f.Error), utf8.ValidString(f.Error), tt.want)
			}
		})
	}
}
