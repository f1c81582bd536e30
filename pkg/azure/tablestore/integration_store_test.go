//go:build integration

package tablestore_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/engine/enginetest"
)

func ins(pk, rk string, props map[string]any) engine.Op {
	return engine.Op{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: pk, RowKey: rk, Properties: props}}
}

func TestIntegrationStore_Submit_ReturnsServiceETags(t *testing.T) {
	t.Parallel()
	s := tablestore.New(newTable(t))
	ctx := t.Context()
	pk := enginetest.UniqueKey("etag")
	etags, err := s.Submit(ctx, []engine.Op{ins(pk, "head", map[string]any{"Seq": int64(0)}), ins(pk, "e0", map[string]any{"V": "x"}), ins(pk, "gone", map[string]any{"V": "y"})})
	if err != nil {
		t.Fatal(err)
	}
	for i, rk := range []string{"head", "e0", "gone"} {
		e, err := s.Get(ctx, pk, rk)
		if err != nil {
			t.Fatal(err)
		}
		if etags[i] == "" || etags[i] != e.ETag {
			t.Errorf("op %d: Submit ETag %q, Get ETag %q", i, etags[i], e.ETag)
		}
	}
	// A steady step: replace the head with the ETag Submit returned (no re-read), append
	// a row, delete a row.
	head := etags[0]
	for seq := int64(1); seq <= 3; seq++ {
		got, err := s.Submit(ctx, []engine.Op{
			{Kind: engine.OpReplace, IfMatch: head, Entity: engine.Entity{PartitionKey: pk, RowKey: "head", Properties: map[string]any{"Seq": seq}}},
			ins(pk, fmt.Sprintf("e%d", seq), map[string]any{"V": "z"}),
		})
		if err != nil {
			t.Fatalf("step %d with the returned ETag: %v", seq, err)
		}
		if got[0] == "" || got[0] == head {
			t.Fatalf("step %d: head ETag %q (previous %q)", seq, got[0], head)
		}
		head = got[0]
	}
	got, err := s.Submit(ctx, []engine.Op{{Kind: engine.OpDelete, IfMatch: etags[2], Entity: engine.Entity{PartitionKey: pk, RowKey: "gone"}}})
	if err != nil || got[0] != "" {
		t.Fatalf("delete: etags %q, err %v", got, err)
	}
}

func TestIntegrationStore_FailedBatch_NamesOp(t *testing.T) {
	t.Parallel()
	s := tablestore.New(newTable(t))
	pk := enginetest.UniqueKey("fail")
	if _, err := s.Submit(t.Context(), []engine.Op{ins(pk, "a", map[string]any{"V": int64(1)})}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		ops   []engine.Op
		index int
		want  error
	}{
		{"insert existing", []engine.Op{ins(pk, "b", map[string]any{"V": int64(1)}), ins(pk, "c", nil), ins(pk, "a", nil)}, 2, engine.ErrConflict},
		{"stale etag", []engine.Op{ins(pk, "d", nil), {Kind: engine.OpMerge, IfMatch: `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`, Entity: engine.Entity{PartitionKey: pk, RowKey: "a"}}}, 1, engine.ErrConflict},
		{"missing row", []engine.Op{{Kind: engine.OpReplace, IfMatch: engine.ETagAny, Entity: engine.Entity{PartitionKey: pk, RowKey: "zz"}}}, 0, engine.ErrNotFound},
	}
	for _, tt := range tests {
		_, err := s.Submit(t.Context(), tt.ops)
		var be *engine.BatchError
		if !errors.Is(err, tt.want) || !errors.As(err, &be) || be.Index != tt.index {
			t.Errorf("%s: err = %v, want %v at op %d", tt.name, err, tt.want, tt.index)
		}
	}
}

func TestIntegrationStore_Values_RoundTripTypes(t *testing.T) {
	t.Parallel()
	s := tablestore.New(newTable(t))
	pk := enginetest.UniqueKey("types")
	when := time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC)
	props := map[string]any{
		"IntegralDouble": 2.0, "NaN": math.NaN(), "Inf": math.Inf(1), "NegInf": math.Inf(-1),
		"MinI32": int32(math.MinInt32), "MaxI64": int64(math.MaxInt64), "SmallI64": int64(7),
		"Empty": "", "EmptyBin": []byte{}, "Early": when, "False": false, "Quote": `it's "json" <&>`,
	}
	if _, err := s.Submit(t.Context(), []engine.Op{ins(pk, "r", props)}); err != nil {
		t.Fatal(err)
	}
	e, err := s.Get(t.Context(), pk, "r")
	if err != nil {
		t.Fatal(err)
	}
	check := map[string]bool{
		"IntegralDouble": e.Properties["IntegralDouble"] == 2.0,
		"NaN":            isNaN(e.Properties["NaN"]),
		"Inf":            e.Properties["Inf"] == math.Inf(1),
		"NegInf":         e.Properties["NegInf"] == math.Inf(-1),
		"MinI32":         e.Properties["MinI32"] == int32(math.MinInt32),
		"MaxI64":         e.Properties["MaxI64"] == int64(math.MaxInt64),
		"SmallI64":       e.Properties["SmallI64"] == int64(7),
		"Empty":          e.Properties["Empty"] == "",
		"False":          e.Properties["False"] == false,
		"Quote":          e.Properties["Quote"] == props["Quote"],
	}
	if tm, ok := e.Properties["Early"].(time.Time); !ok || !tm.Equal(when) {
		t.Errorf("Early = %#v, want %v", e.Properties["Early"], when)
	}
	if b, ok := e.Properties["EmptyBin"].([]byte); !ok || len(b) != 0 {
		t.Errorf("EmptyBin = %#v", e.Properties["EmptyBin"])
	}
	for name, ok := range check {
		if !ok {
			t.Errorf("%s = %#v (%T)", name, e.Properties[name], e.Properties[name])
		}
	}
	if e.Timestamp.IsZero() {
		t.Error("Timestamp not set")
	}
}

func isNaN(v any) bool { f, ok := v.(float64); return ok && math.IsNaN(f) }

// Keys with single quotes: insert, get, query and delete work; replace and merge are
// refused before sending (the SDK does not escape them in batch URLs).
func TestIntegrationStore_QuoteInKeys(t *testing.T) {
	t.Parallel()
	s := tablestore.New(newTable(t))
	ctx := t.Context()
	pk := "run'" + enginetest.UniqueKey("q") + "''x"
	rk := "row'1"
	etags, err := s.Submit(ctx, []engine.Op{ins(pk, rk, map[string]any{"V": int64(1)}), ins(pk, "other", nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Submit(ctx, []engine.Op{{Kind: engine.OpReplace, IfMatch: etags[0], Entity: engine.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"V": int64(2)}}}})
	if !errors.Is(err, engine.ErrInvalidEntity) {
		t.Fatalf("replace: err = %v, want ErrInvalidEntity", err)
	}
	e, err := s.Get(ctx, pk, rk)
	if err != nil || e.Properties["V"] != int64(1) || e.PartitionKey != pk || e.RowKey != rk {
		t.Fatalf("get = %+v, %v", e, err)
	}
	page, err := s.Query(ctx, engine.Query{PartitionKey: pk})
	if err != nil || len(page.Entities) != 2 {
		t.Fatalf("query: %d rows, %v", len(page.Entities), err)
	}
	if _, err := s.Submit(ctx, []engine.Op{{Kind: engine.OpDelete, IfMatch: engine.ETagAny, Entity: engine.Entity{PartitionKey: pk, RowKey: rk}}}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s.Get(ctx, pk, rk); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := s.Get(ctx, pk, "other"); err != nil {
		t.Fatalf("delete removed the wrong row: %v", err)
	}
}

// Limits Azurite does not enforce but Azure does; the store must reject them itself.
func TestIntegrationStore_AzureOnlyLimits_Rejected(t *testing.T) {
	t.Parallel()
	s := tablestore.New(newTable(t))
	pk := enginetest.UniqueKey("lim")
	binary := func() map[string]any { // ~983 KB by Azure's formula, ~1.3 MB once base64-encoded
		m := map[string]any{}
		for i := range 15 {
			m[fmt.Sprintf("B%d", i)] = make([]byte, 65536)
		}
		return m
	}
	var ops []engine.Op
	for i := range 4 {
		ops = append(ops, ins(pk, fmt.Sprintf("r%d", i), binary()))
	}
	if err := engine.ValidateBatch(ops); err != nil {
		t.Fatalf("precondition: the engine's estimate accepts this batch: %v", err)
	}
	_, err := s.Submit(t.Context(), ops)
	var le *engine.LimitError
	if !errors.As(err, &le) || le.Limit != "batch" || le.Size <= engine.MaxBatchBytes {
		t.Fatalf("encoded batch above 4 MiB: err = %v, want a batch LimitError", err)
	}
	if _, err := s.Submit(t.Context(), ops[:3]); err != nil {
		t.Fatalf("3 such entities fit: %v", err)
	}
	bad := []struct {
		name  string
		props map[string]any
	}{
		{"time before 1601", map[string]any{"T": time.Date(1600, 12, 31, 0, 0, 0, 0, time.UTC)}},
		{"zero time", map[string]any{"T": time.Time{}}},
		{"invalid UTF-8", map[string]any{"S": "a\xffb"}},
	}
	for _, b := range bad {
		if _, err := s.Submit(t.Context(), []engine.Op{ins(pk, "bad", b.props)}); !errors.Is(err, engine.ErrInvalidEntity) {
			t.Errorf("%s: err = %v, want ErrInvalidEntity", b.name, err)
		}
	}
	if _, err := s.Get(t.Context(), pk, "bad"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a rejected entity was written: %v", err)
	}
}

func TestIntegrationStore_Query_NumbersCompareWithinIntType(t *testing.T) {
	t.Parallel()
	s := tablestore.New(newTable(t))
	pk := enginetest.UniqueKey("num")
	if _, err := s.Submit(t.Context(), []engine.Op{
		ins(pk, "a", map[string]any{"N": int64(4)}), ins(pk, "b", map[string]any{"N": int64(5)}),
		ins(pk, "c", map[string]any{"N": int64(6)}), ins(pk, "d", map[string]any{"M": int64(5)}),
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cond engine.Cond
		want string
	}{
		{engine.Cond{Property: "N", Op: engine.CondEq, Value: int64(5)}, "b"},
		{engine.Cond{Property: "N", Op: engine.CondNe, Value: int64(5)}, "a,c"},
		{engine.Cond{Property: "N", Op: engine.CondGt, Value: int64(4)}, "b,c"},
		{engine.Cond{Property: "N", Op: engine.CondLe, Value: int64(5)}, "a,b"},
		{engine.Cond{Property: "N", Op: engine.CondEq, Value: int32(5)}, ""},
		{engine.Cond{Property: "RowKey", Op: engine.CondEq, Value: int64(5)}, ""},
	}
	for _, tt := range tests {
		page, err := s.Query(t.Context(), engine.Query{PartitionKey: pk, Where: []engine.Cond{tt.cond}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range page.Entities {
			got = append(got, e.RowKey)
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("%v: got %v, want %s", tt.cond, got, tt.want)
		}
	}
	if _, err := s.Query(t.Context(), engine.Query{PartitionKey: pk, Continuation: "not a token!"}); !errors.Is(err, engine.ErrInvalidQuery) {
		t.Errorf("bad token: err = %v, want ErrInvalidQuery", err)
	}
}

func TestIntegrationStore_MissingTable_NotNotFound(t *testing.T) {
	t.Parallel()
	c := newTable(t)
	if _, err := c.Delete(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	s := tablestore.New(c)
	_, err := s.Submit(t.Context(), []engine.Op{ins("p", "r", nil)})
	if err == nil || errors.Is(err, engine.ErrNotFound) || errors.Is(err, engine.ErrConflict) {
		t.Fatalf("submit to a missing table: err = %v, want a plain service error", err)
	}
	_ = aztables.TableNotFound
}
