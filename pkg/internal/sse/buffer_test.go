package sse_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/sse"
)

var errOverflow = errors.New("overflow")

// appendNumber writes an int event as its decimal text, and refuses anything else.
func appendNumber(dst []byte, chunk any) ([]byte, error) {
	n, ok := chunk.(int)
	if !ok {
		return nil, errors.New("not a number")
	}
	return strconv.AppendInt(dst, int64(n), 10), nil
}

func joined(f sse.Frames) string { return string(f.From(0)) }

func TestBuffer_Emit_CountsFramesAgainstTheLimit(t *testing.T) {
	t.Parallel()
	frame := "event: n\ndata: 1\n\n" // 18 bytes
	tests := []struct {
		name     string
		max      int
		start    string
		emits    int
		accepted int
	}{
		{"exactly at the limit", 3 * len(frame), "", 3, 3},
		{"one byte short", 3*len(frame) - 1, "", 3, 2},
		{"start counts", 2*len(frame) + 5, "12345", 3, 2},
		{"nothing fits", len(frame) - 1, "", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := sse.New(tt.max, errOverflow, appendNumber)
			if tt.start != "" {
				b.Start(tt.start)
			}
			ctx, cancel := context.WithCancel(t.Context())
			b.SetCancel(cancel)
			accepted := 0
			for range tt.emits {
				if err := b.Emit("n", 1); err != nil {
					if !errors.Is(err, errOverflow) {
						t.Fatalf("Emit = %v, want the overflow error", err)
					}
					break
				}
				accepted++
			}
			if accepted != tt.accepted {
				t.Fatalf("accepted %d events, want %d", accepted, tt.accepted)
			}
			overflowed := accepted < tt.emits
			if overflowed != (ctx.Err() != nil) {
				t.Fatalf("run cancelled = %v, overflowed = %v", ctx.Err() != nil, overflowed)
			}
			if overflowed {
				if err := b.Emit("n", 1); !errors.Is(err, errOverflow) {
					t.Fatalf("Emit after overflow = %v, want the overflow error", err)
				}
			}
			failure := b.Close(nil)
			if overflowed != errors.Is(failure, errOverflow) {
				t.Fatalf("Close = %v, overflowed %v", failure, overflowed)
			}
			b.Append("event: end\ndata: {}\n\n") // never counted
			want := tt.start + strings.Repeat(frame, accepted) + "event: end\ndata: {}\n\n"
			if got := joined(b.Frames()); got != want {
				t.Fatalf("frames = %q, want %q", got, want)
			}
		})
	}
}

func TestBuffer_Emit_EncodingFailureClosesTheStream(t *testing.T) {
	t.Parallel()
	b := sse.New(1<<10, errOverflow, appendNumber)
	if err := b.Emit("n", "x"); err == nil || !strings.Contains(err.Error(), "encode stream event") {
		t.Fatalf("Emit = %v, want an encoding error", err)
	}
	if err := b.Emit("n", 1); !errors.Is(err, sse.ErrClosed) {
		t.Fatalf("Emit after a failure = %v, want ErrClosed", err)
	}
	runErr := errors.New("graph failed")
	if failure := b.Close(runErr); failure == nil || errors.Is(failure, runErr) {
		t.Fatalf("Close = %v, want the first failure (the encoding error)", failure)
	}
	if b.Events() {
		t.Fatal("Events = true, want no event")
	}
}

func TestBuffer_Detach_KeepsTheFramesAndDropsTheRest(t *testing.T) {
	t.Parallel()
	b := sse.New(1<<20, errOverflow, appendNumber)
	_ = b.Emit("n", 1)
	frames := b.Detach()
	if err := b.Emit("n", 2); err != nil {
		t.Fatalf("Emit after Detach = %v, want nil", err)
	}
	b.Append("event: end\ndata: {}\n\n")
	if failure := b.Close(nil); failure != nil {
		t.Fatalf("Close = %v", failure)
	}
	if got := joined(frames); got != "event: n\ndata: 1\n\n" {
		t.Fatalf("detached frames = %q", got)
	}
}

func TestBuffer_Since_ReadsWhileTheRunWrites(t *testing.T) {
	t.Parallel()
	const events = 2000
	b := sse.New(1<<20, errOverflow, appendNumber)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range events {
			if err := b.Emit("n", i); err != nil {
				t.Error(err)
				return
			}
		}
		_ = b.Close(nil)
	}()
	var got []byte
	for reading := true; reading; {
		select {
		case <-b.Wake():
		case <-done:
			reading = false
		}
		got = append(got, b.Since(len(got))...)
	}
	var want strings.Builder
	for i := range events {
		want.WriteString("event: n\ndata: " + strconv.Itoa(i) + "\n\n")
	}
	if string(got) != want.String() {
		t.Fatalf("read %d bytes, want %d", len(got), want.Len())
	}
}

func TestFrames(t *testing.T) {
	t.Parallel()
	if got := sse.OverflowFrame(1024); got != "event: error\ndata: {\"error\": \"stream response exceeded max buffered size (1024 bytes)\"}\n\n" {
		t.Errorf("OverflowFrame = %q", got)
	}
	if got := sse.ErrorFrame("stream processing failed"); got != sse.FailedFrame {
		t.Errorf("ErrorFrame = %q, want FailedFrame", got)
	}
}

func TestAppendEvent_FrameWithID(t *testing.T) {
	t.Parallel()
	got := string(sse.AppendEvent([]byte("x"), 42, "custom", []byte(`{"a": 1}`)))
	if want := "xid: 42\nevent: custom\ndata: {\"a\": 1}\n\n"; got != want {
		t.Fatalf("AppendEvent = %q, want %q", got, want)
	}
	if got, want := string(sse.AppendEventID([]byte("x"), "42.r1", "custom", []byte(`{"a": 1}`))), "xid: 42.r1\nevent: custom\ndata: {\"a\": 1}\n\n"; got != want {
		t.Fatalf("AppendEventID = %q, want %q", got, want)
	}
	if got := sse.RetryFrame(500); got != "retry: 500\n\n" {
		t.Fatalf("RetryFrame = %q", got)
	}
}
