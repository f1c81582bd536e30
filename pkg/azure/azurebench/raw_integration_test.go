//go:build integration

package azurebench_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// rawShape is the peer of an engine step: the same batch (same operation kinds, row keys and
// property values) sent with the SDK's SubmitTransaction, hand-encoded, If-Match * on the
// head so it needs no ETag back — no validation, no payload spill, no response parsing. It is
// the floor a step's single batch can reach on this Azurite.
type rawShape struct {
	ops []engine.Op
}

// steadyShape picks a steady step's batch of the run in partition pk from rec: one that
// writes the head with If-Match and appends history rows, from the middle of the run.
func steadyShape(b testing.TB, rec *recordingStore, pk string) rawShape {
	b.Helper()
	var steady [][]engine.Op
	for _, ops := range rec.of(pk) {
		head, inserts := 0, 0
		for _, op := range ops {
			switch op.Kind {
			case engine.OpMerge, engine.OpReplace:
				head++
			case engine.OpInsert:
				inserts++
			}
		}
		if head == 1 && inserts > 0 && head+inserts == len(ops) {
			steady = append(steady, ops)
		}
	}
	if len(steady) < 3 {
		b.Fatalf("run %s: %d steady batches recorded, want at least 3", pk, len(steady))
	}
	return rawShape{ops: steady[len(steady)/2]}
}

// describe names the shape for the log: "merge r + insert h… + insert h…".
func (s rawShape) describe() string {
	out := ""
	for i, op := range s.ops {
		if i > 0 {
			out += " + "
		}
		out += fmt.Sprintf("%s %s (%d props)", op.Kind, op.Entity.RowKey, len(op.Entity.Properties))
	}
	return out
}

// seed inserts the head row the shape's head operation updates, in partition pk.
func (s rawShape) seed(ctx context.Context, c *aztables.Client, pk string) error {
	for _, op := range s.ops {
		if op.Kind == engine.OpMerge || op.Kind == engine.OpReplace {
			body, err := rawEntity(pk, op.Entity.RowKey, op.Entity.Properties)
			if err != nil {
				return err
			}
			if _, err := c.AddEntity(ctx, body, nil); err != nil {
				return fmt.Errorf("seed head of %s: %w", pk, err)
			}
		}
	}
	return nil
}

// commit sends the shape's batch number i to partition pk: the head updated, the history
// rows inserted under row keys made unique by i.
func (s rawShape) commit(ctx context.Context, c *aztables.Client, pk string, i int) error {
	star := azcore.ETagAny
	actions := make([]aztables.TransactionAction, len(s.ops))
	for j, op := range s.ops {
		rk := op.Entity.RowKey
		a := aztables.TransactionAction{}
		switch op.Kind {
		case engine.OpInsert:
			a.ActionType = aztables.TransactionTypeAdd
			rk = fmt.Sprintf("%s-%07d", rk, i)
		case engine.OpMerge:
			a.ActionType, a.IfMatch = aztables.TransactionTypeUpdateMerge, &star
		case engine.OpReplace:
			a.ActionType, a.IfMatch = aztables.TransactionTypeUpdateReplace, &star
		default:
			return fmt.Errorf("raw shape: unexpected %s", op.Kind)
		}
		body, err := rawEntity(pk, rk, op.Entity.Properties)
		if err != nil {
			return err
		}
		a.Entity = body
		actions[j] = a
	}
	if _, err := c.SubmitTransaction(ctx, actions, nil); err != nil {
		return fmt.Errorf("raw commit %d of %s: %w", i, pk, err)
	}
	return nil
}

// storeCommit sends the shape's batch number i to partition pk through store (pkg/azure/tablestore
// in the benchmarks), the head with If-Match on ifMatch, and returns the head's new ETag:
// what the engine's commit sends, without the engine.
func (s rawShape) storeCommit(ctx context.Context, store engine.Store, pk string, i int, ifMatch string) (string, error) {
	ops := make([]engine.Op, len(s.ops))
	head := -1
	for j, op := range s.ops {
		ops[j] = engine.Op{Kind: op.Kind, Entity: engine.Entity{PartitionKey: pk, RowKey: op.Entity.RowKey, Properties: maps.Clone(op.Entity.Properties)}}
		if op.Kind == engine.OpInsert {
			ops[j].Entity.RowKey = fmt.Sprintf("%s-%07d", op.Entity.RowKey, i)
		} else {
			ops[j].IfMatch, head = ifMatch, j
		}
	}
	etags, err := store.Submit(ctx, ops)
	if err != nil {
		return "", fmt.Errorf("store commit %d of %s: %w", i, pk, err)
	}
	if head < 0 || etags[head] == "" {
		return "", fmt.Errorf("store commit %d of %s: no head ETag", i, pk)
	}
	return etags[head], nil
}

// rawEntity hand-encodes an entity in the Table service's JSON format.
func rawEntity(pk, rk string, props map[string]any) ([]byte, error) {
	m := make(map[string]any, 2+2*len(props))
	m["PartitionKey"], m["RowKey"] = pk, rk
	for name, v := range props {
		switch x := v.(type) {
		case string, bool, int32, float64:
			m[name] = x
		case int64:
			m[name], m[name+"@odata.type"] = strconv.FormatInt(x, 10), "Edm.Int64"
		case []byte:
			m[name], m[name+"@odata.type"] = base64.StdEncoding.EncodeToString(x), "Edm.Binary"
		case time.Time:
			m[name], m[name+"@odata.type"] = x.UTC().Format("2006-01-02T15:04:05.0000000Z"), "Edm.DateTime"
		default:
			return nil, fmt.Errorf("raw entity: property %s has type %T", name, v)
		}
	}
	return json.Marshal(m)
}
