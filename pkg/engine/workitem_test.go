package engine_test

import (
	"context"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// FuzzEngine_HandleWorkItem feeds arbitrary queue messages to the work item decoder: it
// must never panic, and a message that names no stored run is dropped (nil), never retried.
func FuzzEngine_HandleWorkItem(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"run_id":"r","gen":1,"step":0}`, "eyJ2IjoxLCJydW5faWQiOiJyIiwiZ2VuIjoxLCJzdGVwIjowfQ==",
		"", "{", "null", `{"v":1,"run_id":"a/b","gen":1,"step":0}`, `{"v":1,"run_id":"","gen":-1}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"br":3,"ba":1,"bn":"work","bi":{"k":[1]},"bk":1}`, `{"v":1,"run_id":"r","gen":1,"step":1,"br":-1,"bn":"w"}`,
	} {
		f.Add([]byte(s), int64(1))
	}
	e, err := engine.New(engine.Options{Registry: durable.NewRegistry(), Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: quiet})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, dequeue int64) {
		if err := e.HandleWorkItem(context.Background(), body, dequeue); err != nil {
			t.Fatalf("HandleWorkItem(%q) = %v, want nil", body, err)
		}
	})
}
