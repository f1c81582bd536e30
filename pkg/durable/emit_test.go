package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/durabletest"
	"github.com/funcgraph/funcgraph/pkg/internal/graphrun"
)

func TestEmit_CollectsInOrder(t *testing.T) {
	t.Parallel()
	ctx, em := graphrun.WithEmitter(t.Context())
	for i, data := range []any{map[string]int{"done": 1}, nil, json.RawMessage(` {"raw": true} `), "text"} {
		if err := durable.Emit(ctx, fmt.Sprintf("e%d", i), data); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, ev := range em.Events() {
		got = append(got, ev.Name+"="+string(ev.Data))
	}
	if want := `e0={"done":1} e1=null e2={"raw":true} e3="text"`; strings.Join(got, " ") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, " "), want)
	}
}

func TestEmit_Refusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, event string
		data        any
		want        error
	}{
		{"empty name", "", 1, durable.ErrInvalidEmitName},
		{"control character", "a\nb", 1, durable.ErrInvalidEmitName},
		{"C1 control", "a\u0085", 1, durable.ErrInvalidEmitName},
		{"invalid UTF-8", "a\xff", 1, durable.ErrInvalidEmitName},
		{"name too long", strings.Repeat("é", 257), 1, durable.ErrInvalidEmitName},
		{"name too long in UTF-16", strings.Repeat("😀", 129), 1, durable.ErrInvalidEmitName},
		{"raw JSON that is not", "e", json.RawMessage(`{`), nil},
		{"unencodable", "e", math.Inf(1), nil},
		{"too large", "e", strings.Repeat("x", durable.MaxEmitDataBytes), durable.ErrEmitTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, em := graphrun.WithEmitter(t.Context())
			err := durable.Emit(ctx, tt.event, tt.data)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Emit = %v, want %v", err, tt.want)
			}
			if n := len(em.Events()); n != 0 {
				t.Fatalf("a refused event was recorded (%d)", n)
			}
		})
	}
	ctx, _ := graphrun.WithEmitter(t.Context())
	if err := durable.Emit(ctx, strings.Repeat("é", 256), nil); err != nil {
		t.Fatalf("a name of 256 characters: %v", err)
	}
}

func TestEmit_BoundedPerEmitter(t *testing.T) {
	t.Parallel()
	ctx, em := graphrun.WithEmitter(t.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 2*durable.MaxEmitsPerStep)
	for i := range 2 * durable.MaxEmitsPerStep {
		wg.Go(func() { errs <- durable.Emit(ctx, "tick", i) })
	}
	wg.Wait()
	close(errs)
	refused := 0
	for err := range errs {
		if errors.Is(err, durable.ErrTooManyEmits) {
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(em.Events()); n != durable.MaxEmitsPerStep || refused != durable.MaxEmitsPerStep {
		t.Fatalf("%d recorded, %d refused; want %d each", n, refused, durable.MaxEmitsPerStep)
	}
}

func TestEmit_OutsideTheEngine_DoesNothing(t *testing.T) {
	t.Parallel()
	if err := durable.Emit(context.Background(), "progress", 1); err != nil {
		t.Fatalf("Emit without an emitter = %v, want nil", err)
	}
	if err := durable.Emit(context.Background(), "", 1); !errors.Is(err, durable.ErrInvalidEmitName) {
		t.Fatalf("a bad name is refused everywhere: %v", err)
	}
}

// ExampleEmit reports a node's progress to the clients following its run (the run's feed,
// GET /api/runs/{instance_id}/feed): each Emit becomes a history row of type "custom" written
// with the step.
func ExampleEmit() {
	summarize := func(ctx context.Context, docs []string) error {
		for i := range docs {
			// ... work on docs[i] ...
			if err := durable.Emit(ctx, "progress", map[string]int{"done": i + 1, "of": len(docs)}); err != nil {
				return err
			}
		}
		return nil
	}
	// The engine records what handlers emit; a handler's test can too.
	ctx, em := durabletest.RecordEmits(context.Background())
	_ = summarize(ctx, []string{"a", "b"})
	for _, ev := range em.Events() {
		fmt.Println(ev.Name, string(ev.Data))
	}
	// Output:
	// progress {"done":1,"of":2}
	// progress {"done":2,"of":2}
}
