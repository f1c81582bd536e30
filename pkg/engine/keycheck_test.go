package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/memory"
)

// quoteShyStore is a memory store that, like the Azure table store, cannot update rows whose
// partition key holds a single quote.
type quoteShyStore struct{ *memory.Store }

func (quoteShyStore) CheckPartitionKey(pk string) error {
	if strings.Contains(pk, "'") {
		return errors.New("no quotes")
	}
	return nil
}

// TestEngine_StartRun_IDTheStoreCannotUpdate_Refused: a run id the store cannot step is refused
// at start (ErrInvalidInstanceID), nothing stored, instead of a run stuck at its first commit.
func TestEngine_StartRun_IDTheStoreCannotUpdate_Refused(t *testing.T) {
	t.Parallel()
	reg := durable.NewRegistry()
	gs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	st := quoteShyStore{memory.NewStore()}
	e, err := engine.New(engine.Options{Registry: reg, Store: st, Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "it's", Input: []byte(`{"source_url":"u"}`)})
	if !errors.Is(err, engine.ErrInvalidInstanceID) {
		t.Fatalf("err = %v, want ErrInvalidInstanceID", err)
	}
	if page, _ := st.Query(t.Context(), engine.Query{PartitionKey: "it's"}); len(page.Entities) != 0 {
		t.Fatalf("%d rows stored for a refused id", len(page.Entities))
	}
	if _, err := e.StartRun(t.Context(), engine.StartRunRequest{GraphName: "data_pipeline", InstanceID: "its", Input: []byte(`{"source_url":"u"}`)}); err != nil {
		t.Fatalf("a plain id: %v", err)
	}
}
