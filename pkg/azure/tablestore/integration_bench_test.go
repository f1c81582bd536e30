//go:build integration

package tablestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

// A steady step's batch: replace the head with If-Match and append two history rows.
// BenchmarkIntegrationSubmitStep and BenchmarkIntegrationRawBatchStep send the same batch;
// compare their ns/op from one run for the Submit/raw ratio.

const benchState = `{"messages":[{"role":"user","content":"hello there"}],"tags":["general"],"approved":null}`

func BenchmarkIntegrationSubmitStep(b *testing.B) {
	s := tablestore.New(newTable(b))
	ctx := context.Background()
	pk := enginetest.UniqueKey("bench")
	etags, err := s.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: "head", Properties: map[string]any{"Seq": int64(0)}}}})
	if err != nil {
		b.Fatal(err)
	}
	head := etags[0]
	seq := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		seq++
		ops := []engine.Op{
			{Kind: engine.OpReplace, IfMatch: head, Entity: engine.Entity{PartitionKey: pk, RowKey: "head",
				Properties: map[string]any{"Seq": seq, "Status": "Running", "State": benchState}}},
			{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("h%012d-a", seq),
				Properties: map[string]any{"Kind": "node", "Node": "classify", "State": benchState}}},
			{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("h%012d-b", seq),
				Properties: map[string]any{"Kind": "route", "Next": "draft_reply"}}},
		}
		etags, err := s.Submit(ctx, ops)
		if err != nil {
			b.Fatal(err)
		}
		if head = etags[0]; head == "" {
			b.Fatal("no head ETag")
		}
	}
}

// BenchmarkIntegrationRawBatchStep is the floor: the SDK's SubmitTransaction of the same
// batch with hand-made JSON and If-Match * (so it needs no ETag back), without our
// validation, encoding, response capture or ETag parsing.
func BenchmarkIntegrationRawBatchStep(b *testing.B) {
	c := newTable(b)
	ctx := context.Background()
	pk := enginetest.UniqueKey("raw")
	mustJSON := func(m map[string]any) []byte {
		data, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	if _, err := c.AddEntity(ctx, mustJSON(map[string]any{"PartitionKey": pk, "RowKey": "head", "Seq": "0", "Seq@odata.type": "Edm.Int64"}), nil); err != nil {
		b.Fatal(err)
	}
	star := azcore.ETagAny
	seq := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		seq++
		actions := []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeUpdateReplace, IfMatch: &star, Entity: mustJSON(map[string]any{"PartitionKey": pk, "RowKey": "head",
				"Seq": fmt.Sprint(seq), "Seq@odata.type": "Edm.Int64", "Status": "Running", "State": benchState})},
			{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(map[string]any{"PartitionKey": pk, "RowKey": fmt.Sprintf("h%012d-a", seq),
				"Kind": "node", "Node": "classify", "State": benchState})},
			{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(map[string]any{"PartitionKey": pk, "RowKey": fmt.Sprintf("h%012d-b", seq),
				"Kind": "route", "Next": "draft_reply"})},
		}
		if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
			b.Fatal(err)
		}
	}
}
