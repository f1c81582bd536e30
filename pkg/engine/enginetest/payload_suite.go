package enginetest

import (
	"errors"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

// RunPayloadStoreTests runs the engine.PayloadStore conformance suite. newPayloadStore
// returns the payload store under test for each subtest; the suite uses fresh key prefixes
// for every subtest, so the stores it returns may share storage.
func RunPayloadStoreTests(t *testing.T, newPayloadStore func(t *testing.T) engine.PayloadStore) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, p engine.PayloadStore)
	}{
		{"PutGet_RoundTripsAndCopies", payloadRoundTrip},
		{"Put_Overwrites", payloadOverwrite},
		{"Get_Missing_NotFound", payloadMissing},
		{"DeletePrefix_DeletesOnlyPrefix", payloadDeletePrefix},
		{"Limits_Rejected", payloadLimits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, newPayloadStore(t))
		})
	}
}

func payloadRoundTrip(t *testing.T, p engine.PayloadStore) {
	key := UniqueKey("run") + "/1/state-1"
	data := []byte(`{"big":"value"}`)
	if err := p.Put(ctxOf(t), key, data); err != nil {
		t.Fatalf("Put: %v", err)
	}
	data[0] = 'X'
	got, err := p.Get(ctxOf(t), key)
	if err != nil || string(got) != `{"big":"value"}` {
		t.Fatalf("Get = %q, %v", got, err)
	}
	got[0] = 'Y'
	if again, _ := p.Get(ctxOf(t), key); string(again) != `{"big":"value"}` {
		t.Fatalf("store shares memory with callers: %q", again)
	}
}

func payloadOverwrite(t *testing.T, p engine.PayloadStore) {
	key := UniqueKey("run") + "/1/x"
	for _, v := range []string{"one", "two"} {
		if err := p.Put(ctxOf(t), key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := p.Get(ctxOf(t), key); err != nil || string(got) != "two" {
		t.Fatalf("Get = %q, %v", got, err)
	}
}

func payloadMissing(t *testing.T, p engine.PayloadStore) {
	if _, err := p.Get(ctxOf(t), UniqueKey("run")+"/1/none"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

func payloadDeletePrefix(t *testing.T, p engine.PayloadStore) {
	run := UniqueKey("run")
	keys := []string{run + "/1/a", run + "/1/b", run + "/2/a", run + "x/1/a"}
	for _, k := range keys {
		if err := p.Put(ctxOf(t), k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := p.DeletePrefix(ctxOf(t), run+"/1/")
	if err != nil || n != 2 {
		t.Fatalf("DeletePrefix = %d, %v; want 2", n, err)
	}
	for i, k := range keys {
		_, err := p.Get(ctxOf(t), k)
		if gone := errors.Is(err, engine.ErrNotFound); gone != (i < 2) {
			t.Errorf("%s: gone=%v after deleting prefix %s/1/", k, gone, run)
		}
	}
	if n, err := p.DeletePrefix(ctxOf(t), run+"/9/"); err != nil || n != 0 {
		t.Errorf("DeletePrefix of nothing = %d, %v", n, err)
	}
	if _, err := p.DeletePrefix(ctxOf(t), run+"/"); err != nil {
		t.Error(err)
	}
}

func payloadLimits(t *testing.T, p engine.PayloadStore) {
	if err := p.Put(ctxOf(t), "", []byte("x")); !errors.Is(err, engine.ErrInvalidEntity) {
		t.Errorf("empty key: err = %v, want ErrInvalidEntity", err)
	}
	if _, err := p.DeletePrefix(ctxOf(t), ""); !errors.Is(err, engine.ErrInvalidEntity) {
		t.Errorf("empty prefix: err = %v, want ErrInvalidEntity", err)
	}
	big := make([]byte, engine.MaxPayloadBytes+1)
	if err := p.Put(ctxOf(t), UniqueKey("run")+"/1/big", big); !errors.Is(err, engine.ErrTooLarge) {
		t.Errorf("oversized payload: err = %v, want ErrTooLarge", err)
	}
}
