package model_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/message"
	"github.com/funcgraph/funcgraph/pkg/model"
)

func TestScript_AnswersInOrderStreamsAndCounts(t *testing.T) {
	t.Parallel()
	s := model.NewScript(message.AI("Hello  there, friend."), message.AI("", message.ToolCall{ID: "c", Name: "t", Args: []byte(`{}`)}))
	var pieces []string
	req := model.Request{Messages: []message.Message{message.System("be brief"), message.Human("hi you")},
		OnText: func(p string) error { pieces = append(pieces, p); return nil }}
	r, err := s.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pieces, "") != "Hello  there, friend." || len(pieces) != 3 {
		t.Fatalf("pieces %q", pieces)
	}
	if r.Usage != (message.Usage{InputTokens: 4, OutputTokens: 3}) || r.StopReason != model.StopEnd || r.Message.Usage == nil {
		t.Fatalf("reply %+v", r)
	}
	r, err = s.Generate(t.Context(), model.Request{})
	if err != nil || r.StopReason != model.StopToolCalls {
		t.Fatalf("second reply %+v, %v", r, err)
	}
	if _, err := s.Generate(t.Context(), model.Request{}); err == nil {
		t.Fatal("a reply past the script's end")
	}
	if n := len(s.Requests()); n != 3 {
		t.Fatalf("%d requests recorded", n)
	}
	stop := errors.New("client gone")
	if _, err := model.NewScript(message.AI("a b")).Generate(t.Context(), model.Request{OnText: func(string) error { return stop }}); !errors.Is(err, stop) {
		t.Fatalf("OnText's error: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := model.NewScript(message.AI("a")).Generate(ctx, model.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// A Script answers with its replies in order, streaming each one's text when asked.
func ExampleNewScript() {
	s := model.NewScript(message.AI("Hello there."))
	r, _ := s.Generate(context.Background(), model.Request{
		Messages: []message.Message{message.Human("hi")},
		OnText:   func(piece string) error { fmt.Printf("%q\n", piece); return nil },
	})
	fmt.Println(r.Message.Text(), r.Usage.InputTokens, r.Usage.OutputTokens)
	// Output:
	// "Hello"
	// " there."
	// Hello there. 1 2
}
